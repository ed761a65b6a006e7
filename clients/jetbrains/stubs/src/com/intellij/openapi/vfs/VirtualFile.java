// Test-only signature stub of com.intellij.openapi.vfs.VirtualFile from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.vfs;

public abstract class VirtualFile {
    public abstract boolean isValid();

    public void refresh(boolean asynchronous, boolean recursive) {
    }
}
