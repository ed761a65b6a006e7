// Test-only signature stub of com.redhat.devtools.lsp4ij.LanguageServerItem from LSP4IJ 0.20.1 (the members used here are the same in 0.17.0); see stubs/README.md.
package com.redhat.devtools.lsp4ij;

import org.eclipse.lsp4j.services.LanguageServer;

public class LanguageServerItem {
    public LanguageServer getServer() {
        return null;
    }
}
