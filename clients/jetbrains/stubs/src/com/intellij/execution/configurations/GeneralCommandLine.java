// Test-only signature stub of com.intellij.execution.configurations.GeneralCommandLine from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.execution.configurations;

import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

import java.nio.charset.Charset;

public class GeneralCommandLine {
    public enum ParentEnvironmentType { NONE, SYSTEM, CONSOLE }

    public GeneralCommandLine(@NotNull String... command) {
    }

    public @NotNull GeneralCommandLine withWorkDirectory(@Nullable String path) {
        return this;
    }

    public @NotNull GeneralCommandLine withParentEnvironmentType(@NotNull ParentEnvironmentType type) {
        return this;
    }

    public @NotNull GeneralCommandLine withCharset(@NotNull Charset charset) {
        return this;
    }
}
