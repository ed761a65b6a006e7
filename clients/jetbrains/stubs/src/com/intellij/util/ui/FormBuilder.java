// Test-only signature stub of com.intellij.util.ui.FormBuilder from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.util.ui;

import org.jetbrains.annotations.NotNull;

import javax.swing.JComponent;
import javax.swing.JPanel;

public class FormBuilder {
    public static FormBuilder createFormBuilder() {
        return null;
    }

    public FormBuilder addLabeledComponent(@NotNull String labelText, @NotNull JComponent component) {
        return this;
    }

    public FormBuilder addComponent(@NotNull JComponent component) {
        return this;
    }

    public FormBuilder addComponentToRightColumn(@NotNull JComponent component) {
        return this;
    }

    public FormBuilder addSeparator() {
        return this;
    }

    public FormBuilder addComponentFillVertically(@NotNull JComponent component, int verticalSpace) {
        return this;
    }

    public JPanel getPanel() {
        return null;
    }
}
