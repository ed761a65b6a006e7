// Test-only signature stub of com.intellij.openapi.ui.TextFieldWithBrowseButton from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.ui;

import com.intellij.openapi.fileChooser.FileChooserDescriptor;
import com.intellij.openapi.project.Project;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

import javax.swing.JTextField;

public class TextFieldWithBrowseButton extends ComponentWithBrowseButton<JTextField> {
    public TextFieldWithBrowseButton() {
    }

    public void addBrowseFolderListener(@Nullable Project project, @NotNull FileChooserDescriptor fileChooserDescriptor) {
    }

    public String getText() {
        return "";
    }

    public void setText(String text) {
    }
}
