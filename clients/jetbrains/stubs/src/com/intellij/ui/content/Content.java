// Test-only signature stub of com.intellij.ui.content.Content from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.ui.content;

import com.intellij.openapi.Disposable;
import org.jetbrains.annotations.NotNull;

public interface Content {
    void setDisposer(@NotNull Disposable disposer);
}
