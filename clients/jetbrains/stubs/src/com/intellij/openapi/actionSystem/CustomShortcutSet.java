// Test-only signature stub of com.intellij.openapi.actionSystem.CustomShortcutSet from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.actionSystem;

import org.jetbrains.annotations.NotNull;

public final class CustomShortcutSet implements ShortcutSet {
    public static @NotNull CustomShortcutSet fromString(@NotNull String @NotNull ... keyboardShortcuts) {
        return null;
    }
}
