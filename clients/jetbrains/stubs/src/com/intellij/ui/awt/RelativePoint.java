// Test-only signature stub of com.intellij.ui.awt.RelativePoint from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.ui.awt;

import org.jetbrains.annotations.NotNull;

import java.awt.event.MouseEvent;

public class RelativePoint {
    public RelativePoint(@NotNull MouseEvent event) {
    }
}
