// Test-only signature stub of com.intellij.openapi.ui.popup.JBPopupFactory from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.ui.popup;

import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

import javax.swing.JComponent;

public abstract class JBPopupFactory {
    public static JBPopupFactory getInstance() {
        return null;
    }

    public abstract @NotNull ComponentPopupBuilder createComponentPopupBuilder(@NotNull JComponent content,
                                                                            @Nullable JComponent preferableFocusComponent);
}
