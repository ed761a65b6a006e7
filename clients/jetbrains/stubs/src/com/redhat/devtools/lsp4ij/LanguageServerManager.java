// Test-only signature stub of com.redhat.devtools.lsp4ij.LanguageServerManager from LSP4IJ 0.20.1 (the members used here are the same in 0.17.0); see stubs/README.md.
package com.redhat.devtools.lsp4ij;

import com.intellij.openapi.project.Project;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

import java.util.concurrent.CompletableFuture;

public class LanguageServerManager {
    public static LanguageServerManager getInstance(@NotNull Project project) {
        return null;
    }

    public void start(@NotNull String languageServerId, @NotNull StartOptions options) {
    }

    public void stop(@NotNull String languageServerId, @NotNull StopOptions options) {
    }

    public CompletableFuture<@Nullable LanguageServerItem> getLanguageServer(@NotNull String languageServerId) {
        return null;
    }

    public static class StartOptions {
        public StartOptions() {
        }

        public StartOptions setForceStart(boolean forceStart) {
            return this;
        }
    }

    public static class StopOptions {
        public StopOptions() {
        }

        public StopOptions setWillDisable(boolean willDisable) {
            return this;
        }
    }
}
