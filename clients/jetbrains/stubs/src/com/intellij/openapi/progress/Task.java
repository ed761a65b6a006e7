// Test-only signature stub of com.intellij.openapi.progress.Task from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.progress;

import com.intellij.openapi.project.Project;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

public abstract class Task {
    public abstract void run(@NotNull ProgressIndicator indicator);

    public void queue() {
    }

    public abstract static class Backgroundable extends Task {
        public Backgroundable(@Nullable Project project, @NotNull String title, boolean canBeCancelled) {
        }
    }
}
