// Test-only signature stub of com.intellij.util.ui.UIUtil from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.util.ui;

import org.jetbrains.annotations.NotNull;

import java.awt.Font;

public final class UIUtil {
    public static @NotNull Font getLabelFont() {
        return null;
    }
}
