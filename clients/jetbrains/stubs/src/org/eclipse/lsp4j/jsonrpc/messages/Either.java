// Test-only signature stub of org.eclipse.lsp4j.jsonrpc.messages.Either from LSP4J 1.0.0 (the LSP4J LSP4IJ 0.20.1 bundles); see stubs/README.md.
package org.eclipse.lsp4j.jsonrpc.messages;

public class Either<L, R> {
    protected Either(L left, R right) {
    }

    public L getLeft() {
        return null;
    }

    public R getRight() {
        return null;
    }

    public boolean isLeft() {
        return false;
    }

    public boolean isRight() {
        return false;
    }
}
