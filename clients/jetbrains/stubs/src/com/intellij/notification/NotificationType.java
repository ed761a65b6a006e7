// Test-only signature stub of com.intellij.notification.NotificationType from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.notification;

public enum NotificationType {
    INFORMATION, WARNING, ERROR, IDE_UPDATE
}
