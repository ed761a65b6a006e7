// Test-only signature stub of com.intellij.openapi.progress.ProgressIndicator from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.progress;

public interface ProgressIndicator {
    boolean isCanceled();
}
