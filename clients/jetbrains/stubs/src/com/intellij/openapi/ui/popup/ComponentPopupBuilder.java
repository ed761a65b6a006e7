// Test-only signature stub of com.intellij.openapi.ui.popup.ComponentPopupBuilder from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.ui.popup;

import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

public interface ComponentPopupBuilder {
    @NotNull ComponentPopupBuilder setTitle(@Nullable String title);

    @NotNull ComponentPopupBuilder setRequestFocus(boolean requestFocus);

    @NotNull ComponentPopupBuilder setCancelOnClickOutside(boolean cancel);

    @NotNull JBPopup createPopup();
}
