// Test-only signature stub of com.intellij.openapi.project.Project from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.project;

import com.intellij.openapi.components.ComponentManager;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

public interface Project extends ComponentManager {
    @NotNull String getName();

    @Nullable String getBasePath();
}
