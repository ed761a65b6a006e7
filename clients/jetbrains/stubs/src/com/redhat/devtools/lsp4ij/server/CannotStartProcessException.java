// Test-only signature stub of com.redhat.devtools.lsp4ij.server.CannotStartProcessException from LSP4IJ 0.20.1 (the members used here are the same in 0.17.0); see stubs/README.md.
package com.redhat.devtools.lsp4ij.server;

public class CannotStartProcessException extends LanguageServerException {
    public CannotStartProcessException(Exception e) {
        super(e);
    }

    public CannotStartProcessException(String message) {
        super(message);
    }
}
