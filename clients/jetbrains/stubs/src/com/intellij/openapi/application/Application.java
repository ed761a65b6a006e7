// Test-only signature stub of com.intellij.openapi.application.Application from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.application;

import com.intellij.openapi.components.ComponentManager;
import org.jetbrains.annotations.NotNull;

import java.util.concurrent.Future;

public interface Application extends ComponentManager {
    void invokeLater(@NotNull Runnable runnable);

    void invokeLater(@NotNull Runnable runnable, @NotNull ModalityState state);

    @NotNull Future<?> executeOnPooledThread(@NotNull Runnable action);
}
