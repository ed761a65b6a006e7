// Test-only signature stub of com.intellij.openapi.fileEditor.FileEditorManager from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.fileEditor;

import com.intellij.openapi.project.Project;
import com.intellij.openapi.vfs.VirtualFile;
import org.jetbrains.annotations.NotNull;

public abstract class FileEditorManager {
    public static FileEditorManager getInstance(@NotNull Project project) {
        return null;
    }

    public @NotNull FileEditor @NotNull [] openFile(@NotNull VirtualFile file, boolean focusEditor) {
        return new FileEditor[0];
    }
}
