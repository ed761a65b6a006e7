// Test-only signature stub of com.redhat.devtools.lsp4ij.client.LanguageClientImpl from LSP4IJ 0.20.1 (the members used here are the same in 0.17.0); see stubs/README.md.
package com.redhat.devtools.lsp4ij.client;

import com.intellij.openapi.Disposable;
import com.intellij.openapi.project.Project;
import org.eclipse.lsp4j.ProgressParams;
import org.eclipse.lsp4j.services.LanguageClient;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

public class LanguageClientImpl implements LanguageClient, Disposable {
    public LanguageClientImpl(@NotNull Project project) {
    }

    public @NotNull Project getProject() {
        return null;
    }

    @Override
    public void notifyProgress(ProgressParams params) {
    }

    @Nullable
    protected Object createSettings() {
        return null;
    }

    @Override
    public void dispose() {
    }

    public boolean isDisposed() {
        return false;
    }
}
