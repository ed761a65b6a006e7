// Test-only signature stub of com.redhat.devtools.lsp4ij.server.LanguageServerException from LSP4IJ 0.20.1 (the members used here are the same in 0.17.0); see stubs/README.md.
package com.redhat.devtools.lsp4ij.server;

public class LanguageServerException extends RuntimeException {
    public LanguageServerException(String message, Throwable e) {
        super(message, e);
    }

    public LanguageServerException(Throwable e) {
        super(e);
    }

    public LanguageServerException(String message) {
        super(message);
    }
}
