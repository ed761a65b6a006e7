// Test-only signature stub of com.intellij.openapi.fileEditor.OpenFileDescriptor from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.fileEditor;

import com.intellij.openapi.project.Project;
import com.intellij.openapi.vfs.VirtualFile;
import org.jetbrains.annotations.NotNull;

public class OpenFileDescriptor {
    public OpenFileDescriptor(@NotNull Project project, @NotNull VirtualFile file, int logicalLine, int logicalColumn) {
    }

    public void navigate(boolean requestFocus) {
    }
}
