// Test-only signature stub of com.intellij.notification.NotificationGroup from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.notification;

import org.jetbrains.annotations.NotNull;

public final class NotificationGroup {
    public @NotNull Notification createNotification(@NotNull String title, @NotNull String content, @NotNull NotificationType type) {
        return null;
    }

    public @NotNull Notification createNotification(@NotNull String content, @NotNull NotificationType type) {
        return null;
    }
}
