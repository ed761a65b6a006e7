// Test-only signature stub of com.intellij.openapi.actionSystem.AnAction from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.actionSystem;

import com.intellij.openapi.Disposable;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

import javax.swing.JComponent;

public abstract class AnAction {
    public AnAction() {
    }

    public @NotNull ActionUpdateThread getActionUpdateThread() {
        return ActionUpdateThread.BGT;
    }

    public void update(@NotNull AnActionEvent e) {
    }

    public abstract void actionPerformed(@NotNull AnActionEvent e);

    public final void registerCustomShortcutSet(@NotNull ShortcutSet shortcutSet, @Nullable JComponent component,
                                                @Nullable Disposable parentDisposable) {
    }
}
