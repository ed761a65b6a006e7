// Test-only signature stub of com.intellij.openapi.ui.popup.JBPopup from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.ui.popup;

import com.intellij.ui.awt.RelativePoint;
import org.jetbrains.annotations.NotNull;

public interface JBPopup {
    void cancel();

    void show(@NotNull RelativePoint point);
}
