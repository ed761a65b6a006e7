// Test-only signature stub of com.intellij.openapi.actionSystem.AnActionEvent from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.actionSystem;

import com.intellij.openapi.project.Project;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

public class AnActionEvent {
    public @Nullable Project getProject() {
        return null;
    }

    public @NotNull Presentation getPresentation() {
        return null;
    }

    public <T> @Nullable T getData(@NotNull DataKey<T> key) {
        return null;
    }
}
