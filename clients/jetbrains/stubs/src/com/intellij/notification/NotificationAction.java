// Test-only signature stub of com.intellij.notification.NotificationAction from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.notification;

import com.intellij.openapi.project.DumbAwareAction;
import org.jetbrains.annotations.NotNull;

public abstract class NotificationAction extends DumbAwareAction {
    public static @NotNull NotificationAction createSimple(@NotNull String text, @NotNull Runnable action) {
        return null;
    }

    public static @NotNull NotificationAction createSimpleExpiring(@NotNull String text, @NotNull Runnable action) {
        return null;
    }
}
