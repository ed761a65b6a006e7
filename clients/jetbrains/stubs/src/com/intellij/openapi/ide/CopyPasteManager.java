// Test-only signature stub of com.intellij.openapi.ide.CopyPasteManager from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.ide;

import org.jetbrains.annotations.NotNull;

import java.awt.datatransfer.Transferable;

public abstract class CopyPasteManager {
    public static CopyPasteManager getInstance() {
        return null;
    }

    public abstract void setContents(@NotNull Transferable content);
}
