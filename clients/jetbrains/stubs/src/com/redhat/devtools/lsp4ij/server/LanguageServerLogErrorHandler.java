// Test-only signature stub of com.redhat.devtools.lsp4ij.server.LanguageServerLogErrorHandler from LSP4IJ 0.20.1 (the members used here are the same in 0.17.0); see stubs/README.md.
package com.redhat.devtools.lsp4ij.server;

public interface LanguageServerLogErrorHandler {
    void logError(String error);
}
