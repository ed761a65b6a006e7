// Test-only signature stub of com.intellij.openapi.Disposable from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi;

public interface Disposable {
    void dispose();
}
