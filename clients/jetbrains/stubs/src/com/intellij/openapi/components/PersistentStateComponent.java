// Test-only signature stub of com.intellij.openapi.components.PersistentStateComponent from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.components;

import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

public interface PersistentStateComponent<T> {
    @Nullable T getState();

    void loadState(@NotNull T state);
}
