// Test-only signature stub of com.intellij.ui.content.ContentFactory from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.ui.content;

import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

import javax.swing.JComponent;

public interface ContentFactory {
    static @NotNull ContentFactory getInstance() {
        return null;
    }

    @NotNull Content createContent(@Nullable JComponent component, @Nullable String displayName, boolean isLockable);
}
