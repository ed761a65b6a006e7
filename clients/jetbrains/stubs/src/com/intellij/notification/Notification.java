// Test-only signature stub of com.intellij.notification.Notification from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.notification;

import com.intellij.openapi.actionSystem.AnAction;
import com.intellij.openapi.project.Project;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

public class Notification {
    public @NotNull Notification addAction(@NotNull AnAction action) {
        return this;
    }

    public void notify(@Nullable Project project) {
    }
}
