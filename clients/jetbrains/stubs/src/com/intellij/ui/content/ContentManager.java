// Test-only signature stub of com.intellij.ui.content.ContentManager from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.ui.content;

import org.jetbrains.annotations.NotNull;

public interface ContentManager {
    void addContent(@NotNull Content content);
}
