// Test-only signature stub of com.intellij.openapi.components.ComponentManager from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.components;

import com.intellij.openapi.Disposable;
import org.jetbrains.annotations.NotNull;

public interface ComponentManager extends Disposable {
    <T> T getService(@NotNull Class<T> serviceClass);

    boolean isDisposed();
}
