// Test-only signature stub of com.redhat.devtools.lsp4ij.LanguageServerFactory from LSP4IJ 0.20.1 (the members used here are the same in 0.17.0); see stubs/README.md.
package com.redhat.devtools.lsp4ij;

import com.intellij.openapi.project.Project;
import com.redhat.devtools.lsp4ij.client.LanguageClientImpl;
import com.redhat.devtools.lsp4ij.client.features.LSPClientFeatures;
import com.redhat.devtools.lsp4ij.server.StreamConnectionProvider;
import org.eclipse.lsp4j.services.LanguageServer;
import org.jetbrains.annotations.NotNull;

public interface LanguageServerFactory {
    @NotNull StreamConnectionProvider createConnectionProvider(@NotNull Project project);

    @NotNull default LanguageClientImpl createLanguageClient(@NotNull Project project) {
        return null;
    }

    @NotNull default Class<? extends LanguageServer> getServerInterface() {
        return LanguageServer.class;
    }

    @NotNull default LSPClientFeatures createClientFeatures() {
        return null;
    }
}
