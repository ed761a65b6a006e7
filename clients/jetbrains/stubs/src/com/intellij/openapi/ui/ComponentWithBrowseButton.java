// Test-only signature stub of com.intellij.openapi.ui.ComponentWithBrowseButton from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.ui;

import javax.swing.JComponent;
import javax.swing.JPanel;

public class ComponentWithBrowseButton<Comp extends JComponent> extends JPanel {
}
