// Test-only signature stub of com.intellij.openapi.ui.Messages from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.ui;

import com.intellij.openapi.project.Project;
import org.jetbrains.annotations.Nullable;

import javax.swing.Icon;

public class Messages {
    public static @Nullable String showMultilineInputDialog(Project project, String message, String title,
                                                            @Nullable String initialValue, @Nullable Icon icon,
                                                            @Nullable InputValidator validator) {
        return null;
    }
}
