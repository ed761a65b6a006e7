// Test-only signature stub of com.redhat.devtools.lsp4ij.ServerStatus from LSP4IJ 0.20.1 (the members used here are the same in 0.17.0); see stubs/README.md.
package com.redhat.devtools.lsp4ij;

public enum ServerStatus {
    none, checking_installed, installing, installed, not_installed, starting, started, stopping, stopped
}
