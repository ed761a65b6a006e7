// Test-only signature stub of com.intellij.openapi.actionSystem.DataKey from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.actionSystem;

public final class DataKey<T> {
    private DataKey() {
    }
}
