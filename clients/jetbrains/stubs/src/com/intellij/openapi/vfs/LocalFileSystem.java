// Test-only signature stub of com.intellij.openapi.vfs.LocalFileSystem from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.vfs;

import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

import java.nio.file.Path;

public abstract class LocalFileSystem extends VirtualFileSystem {
    public static LocalFileSystem getInstance() {
        return null;
    }

    public @Nullable VirtualFile refreshAndFindFileByNioFile(@NotNull Path file) {
        return null;
    }
}
