// Test-only signature stub of com.intellij.openapi.wm.StatusBarWidgetFactory from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.wm;

import com.intellij.openapi.project.Project;
import org.jetbrains.annotations.Nls;
import org.jetbrains.annotations.NotNull;

public interface StatusBarWidgetFactory {
    @NotNull String getId();

    @Nls @NotNull String getDisplayName();

    default boolean isAvailable(@NotNull Project project) {
        return true;
    }

    @NotNull StatusBarWidget createWidget(@NotNull Project project);
}
