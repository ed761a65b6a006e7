// Test-only signature stub of com.intellij.ui.components.JBCheckBox from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.ui.components;

import org.jetbrains.annotations.Nullable;

import javax.swing.JCheckBox;

public class JBCheckBox extends JCheckBox {
    public JBCheckBox(@Nullable String text) {
    }
}
