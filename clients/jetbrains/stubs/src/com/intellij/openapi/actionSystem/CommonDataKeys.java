// Test-only signature stub of com.intellij.openapi.actionSystem.CommonDataKeys from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.actionSystem;

import com.intellij.openapi.editor.Editor;

public class CommonDataKeys {
    public static final DataKey<Editor> EDITOR = null;
}
