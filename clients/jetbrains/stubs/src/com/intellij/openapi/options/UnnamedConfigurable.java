// Test-only signature stub of com.intellij.openapi.options.UnnamedConfigurable from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.options;

import org.jetbrains.annotations.Nullable;

import javax.swing.JComponent;

public interface UnnamedConfigurable {
    @Nullable JComponent createComponent();

    boolean isModified();

    void apply() throws ConfigurationException;

    default void reset() {
    }

    default void disposeUIResources() {
    }
}
