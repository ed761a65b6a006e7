// Test-only signature stub of com.intellij.openapi.project.ProjectManager from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.project;

import org.jetbrains.annotations.NotNull;

public abstract class ProjectManager {
    public static ProjectManager getInstance() {
        return null;
    }

    public abstract @NotNull Project @NotNull [] getOpenProjects();
}
