// Test-only signature stub of com.intellij.openapi.wm.StatusBar from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.wm;

import org.jetbrains.annotations.NotNull;

public interface StatusBar {
    void updateWidget(@NotNull String id);
}
