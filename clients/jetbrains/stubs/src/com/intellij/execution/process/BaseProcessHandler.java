// Test-only signature stub of com.intellij.execution.process.BaseProcessHandler from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.execution.process;

import org.jetbrains.annotations.NotNull;

public abstract class BaseProcessHandler<T extends Process> extends ProcessHandler {
    public final @NotNull T getProcess() {
        return null;
    }
}
