// Test-only signature stub of com.intellij.util.ui.StatusText from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.util.ui;

public abstract class StatusText {
    public StatusText setText(String text) {
        return this;
    }
}
