// Test-only signature stub of com.intellij.openapi.wm.ToolWindow from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.wm;

import com.intellij.ui.content.ContentManager;
import org.jetbrains.annotations.NotNull;

public interface ToolWindow {
    @NotNull ContentManager getContentManager();
}
