// Test-only signature stub of com.intellij.notification.NotificationGroupManager from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.notification;

import org.jetbrains.annotations.NotNull;

public interface NotificationGroupManager {
    static @NotNull NotificationGroupManager getInstance() {
        return null;
    }

    NotificationGroup getNotificationGroup(@NotNull String groupId);
}
