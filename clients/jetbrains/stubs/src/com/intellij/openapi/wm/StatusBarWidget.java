// Test-only signature stub of com.intellij.openapi.wm.StatusBarWidget from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.wm;

import com.intellij.openapi.Disposable;
import com.intellij.util.Consumer;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

import java.awt.event.MouseEvent;

public interface StatusBarWidget extends Disposable {
    @NotNull String ID();

    default void install(@NotNull StatusBar statusBar) {
    }

    default @Nullable WidgetPresentation getPresentation() {
        return null;
    }

    @Override
    default void dispose() {
    }

    interface WidgetPresentation {
        default @Nullable String getTooltipText() {
            return null;
        }

        default @Nullable Consumer<MouseEvent> getClickConsumer() {
            return null;
        }
    }

    interface TextPresentation extends WidgetPresentation {
        @NotNull String getText();

        float getAlignment();
    }
}
