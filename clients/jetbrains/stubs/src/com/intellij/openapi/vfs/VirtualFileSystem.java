// Test-only signature stub of com.intellij.openapi.vfs.VirtualFileSystem from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.vfs;

import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

public abstract class VirtualFileSystem {
    public abstract @Nullable VirtualFile findFileByPath(@NotNull String path);
}
