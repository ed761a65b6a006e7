// Test-only signature stub of org.eclipse.lsp4j.services.LanguageClient from LSP4J 1.0.0 (the LSP4J LSP4IJ 0.20.1 bundles); see stubs/README.md.
package org.eclipse.lsp4j.services;

import org.eclipse.lsp4j.ProgressParams;

public interface LanguageClient {
    void notifyProgress(ProgressParams params);
}
