// Test-only signature stub of com.intellij.util.ui.JBUI from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.util.ui;

import org.jetbrains.annotations.NotNull;

public class JBUI {
    public static final class Borders {
        public static @NotNull JBEmptyBorder empty(int offsets) {
            return null;
        }
    }
}
