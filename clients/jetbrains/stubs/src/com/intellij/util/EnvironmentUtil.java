// Test-only signature stub of com.intellij.util.EnvironmentUtil from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.util;

import org.jetbrains.annotations.NotNull;

import java.util.Map;

public final class EnvironmentUtil {
    public static @NotNull Map<String, String> getEnvironmentMap() {
        return Map.of();
    }
}
