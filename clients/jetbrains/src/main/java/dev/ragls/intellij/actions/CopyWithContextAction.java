package dev.ragls.intellij.actions;

import com.intellij.openapi.actionSystem.AnActionEvent;
import com.intellij.openapi.actionSystem.CommonDataKeys;
import com.intellij.openapi.editor.Editor;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.ui.Messages;
import dev.ragls.intellij.RaglsProjectService;
import org.jetbrains.annotations.NotNull;

/** Copies a message (the editor selection, or typed text) with the project's context in front. */
public final class CopyWithContextAction extends RaglsAction {
    @Override
    void perform(@NotNull AnActionEvent e, @NotNull Project project, @NotNull RaglsProjectService service) {
        Editor editor = e.getData(CommonDataKeys.EDITOR);
        String text = editor == null ? null : editor.getSelectionModel().getSelectedText();
        if (text == null || text.isBlank()) {
            text = Messages.showMultilineInputDialog(project, "Message to send to your AI chat:",
                    "Copy Message with Project Context", "", null, null);
        }
        if (text != null && !text.isBlank()) {
            ContextCopier.copy(project, text);
        }
    }
}
