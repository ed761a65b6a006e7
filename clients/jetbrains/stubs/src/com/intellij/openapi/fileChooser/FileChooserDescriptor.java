// Test-only signature stub of com.intellij.openapi.fileChooser.FileChooserDescriptor from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.fileChooser;

import org.jetbrains.annotations.Nullable;

public class FileChooserDescriptor {
    public FileChooserDescriptor(boolean chooseFiles, boolean chooseFolders, boolean chooseJars, boolean chooseMultiple) {
    }

    public FileChooserDescriptor withTitle(@Nullable String title) {
        return this;
    }

    public FileChooserDescriptor withDescription(@Nullable String description) {
        return this;
    }
}
