// Test-only signature stub of com.intellij.openapi.options.ShowSettingsUtil from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.options;

import com.intellij.openapi.project.Project;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

public abstract class ShowSettingsUtil {
    public static ShowSettingsUtil getInstance() {
        return null;
    }

    public abstract <T extends Configurable> void showSettingsDialog(@Nullable Project project, @NotNull Class<T> configurableClass);
}
