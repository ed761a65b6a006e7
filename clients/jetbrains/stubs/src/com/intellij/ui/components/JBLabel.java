// Test-only signature stub of com.intellij.ui.components.JBLabel from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.ui.components;

import org.jetbrains.annotations.NotNull;

import javax.swing.JLabel;

public class JBLabel extends JLabel {
    public JBLabel(@NotNull String text) {
    }
}
