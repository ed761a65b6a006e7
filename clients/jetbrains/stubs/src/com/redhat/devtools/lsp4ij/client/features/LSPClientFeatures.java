// Test-only signature stub of com.redhat.devtools.lsp4ij.client.features.LSPClientFeatures from LSP4IJ 0.20.1 (the members used here are the same in 0.17.0); see stubs/README.md.
package com.redhat.devtools.lsp4ij.client.features;

import com.intellij.openapi.project.Project;
import com.redhat.devtools.lsp4ij.ServerStatus;
import org.jetbrains.annotations.NotNull;

public class LSPClientFeatures {
    public LSPClientFeatures() {
    }

    public void handleServerStatusChanged(@NotNull ServerStatus serverStatus) {
    }

    public boolean keepServerAlive() {
        return false;
    }

    public final Project getProject() {
        return null;
    }
}
