// Test-only signature stub of com.intellij.openapi.editor.SelectionModel from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.editor;

import org.jetbrains.annotations.Nullable;

public interface SelectionModel {
    @Nullable String getSelectedText();
}
