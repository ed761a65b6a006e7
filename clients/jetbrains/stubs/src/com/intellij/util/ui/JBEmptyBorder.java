// Test-only signature stub of com.intellij.util.ui.JBEmptyBorder from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.util.ui;

import javax.swing.border.EmptyBorder;

public class JBEmptyBorder extends EmptyBorder {
    public JBEmptyBorder(int offset) {
        super(offset, offset, offset, offset);
    }
}
