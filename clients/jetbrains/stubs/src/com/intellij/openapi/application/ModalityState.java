// Test-only signature stub of com.intellij.openapi.application.ModalityState from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.application;

import org.jetbrains.annotations.NotNull;

public abstract class ModalityState {
    public static @NotNull ModalityState any() {
        return null;
    }
}
