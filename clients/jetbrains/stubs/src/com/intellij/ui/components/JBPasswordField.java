// Test-only signature stub of com.intellij.ui.components.JBPasswordField from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.ui.components;

import com.intellij.util.ui.StatusText;
import org.jetbrains.annotations.NotNull;

import javax.swing.JPasswordField;

public class JBPasswordField extends JPasswordField {
    public JBPasswordField() {
    }

    public @NotNull StatusText getEmptyText() {
        return null;
    }
}
