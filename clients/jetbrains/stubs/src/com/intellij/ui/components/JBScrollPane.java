// Test-only signature stub of com.intellij.ui.components.JBScrollPane from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.ui.components;

import javax.swing.JScrollPane;
import java.awt.Component;

public class JBScrollPane extends JScrollPane {
    public JBScrollPane(Component view) {
    }
}
