// Test-only signature stub of com.intellij.ui.components.JBTextArea from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.ui.components;

import com.intellij.util.ui.StatusText;
import org.jetbrains.annotations.NotNull;

import javax.swing.JTextArea;

public class JBTextArea extends JTextArea {
    public JBTextArea(int rows, int columns) {
    }

    public @NotNull StatusText getEmptyText() {
        return null;
    }
}
