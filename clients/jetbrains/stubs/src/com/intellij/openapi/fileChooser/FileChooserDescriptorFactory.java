// Test-only signature stub of com.intellij.openapi.fileChooser.FileChooserDescriptorFactory from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.fileChooser;

public final class FileChooserDescriptorFactory {
    private FileChooserDescriptorFactory() {
    }

    public static FileChooserDescriptor singleFile() {
        return null;
    }
}
