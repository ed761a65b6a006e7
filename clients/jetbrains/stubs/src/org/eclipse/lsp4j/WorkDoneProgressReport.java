// Test-only signature stub of org.eclipse.lsp4j.WorkDoneProgressReport from LSP4J 1.0.0 (the LSP4J LSP4IJ 0.20.1 bundles); see stubs/README.md.
package org.eclipse.lsp4j;

public class WorkDoneProgressReport implements WorkDoneProgressNotification {
    public String getMessage() {
        return null;
    }

    public Integer getPercentage() {
        return null;
    }
}
