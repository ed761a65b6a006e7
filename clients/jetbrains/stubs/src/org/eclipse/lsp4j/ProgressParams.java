// Test-only signature stub of org.eclipse.lsp4j.ProgressParams from LSP4J 1.0.0 (the LSP4J LSP4IJ 0.20.1 bundles); see stubs/README.md.
package org.eclipse.lsp4j;

import org.eclipse.lsp4j.jsonrpc.messages.Either;

public class ProgressParams {
    public Either<String, Integer> getToken() {
        return null;
    }

    public Either<WorkDoneProgressNotification, Object> getValue() {
        return null;
    }
}
