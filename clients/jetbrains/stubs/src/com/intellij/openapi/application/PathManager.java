// Test-only signature stub of com.intellij.openapi.application.PathManager from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.application;

import org.jetbrains.annotations.NotNull;

public final class PathManager {
    public static @NotNull String getLogPath() {
        return "";
    }
}
