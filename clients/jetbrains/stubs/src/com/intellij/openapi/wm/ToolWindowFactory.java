// Test-only signature stub of com.intellij.openapi.wm.ToolWindowFactory from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.wm;

import com.intellij.openapi.project.Project;
import org.jetbrains.annotations.NotNull;

public interface ToolWindowFactory {
    void createToolWindowContent(@NotNull Project project, @NotNull ToolWindow toolWindow);
}
