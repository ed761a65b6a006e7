// Test-only signature stub of com.intellij.openapi.editor.Editor from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.editor;

import org.jetbrains.annotations.NotNull;

public interface Editor {
    @NotNull SelectionModel getSelectionModel();
}
