// Test-only signature stub of com.intellij.openapi.vfs.VirtualFileManager from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.vfs;

import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

public abstract class VirtualFileManager {
    public static @NotNull VirtualFileManager getInstance() {
        return null;
    }

    public abstract @Nullable VirtualFile findFileByUrl(@NotNull String url);
}
