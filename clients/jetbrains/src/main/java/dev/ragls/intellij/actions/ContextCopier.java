package dev.ragls.intellij.actions;

import com.intellij.notification.NotificationGroupManager;
import com.intellij.notification.NotificationType;
import com.intellij.openapi.application.ApplicationManager;
import com.intellij.openapi.ide.CopyPasteManager;
import com.intellij.openapi.progress.ProgressIndicator;
import com.intellij.openapi.progress.Task;
import com.intellij.openapi.project.Project;
import dev.ragls.core.chat.RagChat;
import dev.ragls.core.protocol.RetrieveParams;
import dev.ragls.intellij.RaglsProjectService;
import dev.ragls.intellij.settings.RaglsSettings;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

import java.awt.datatransfer.StringSelection;

/** "Copy message with project context": retrieves, prepends {@code <rag_context>}, copies. */
public final class ContextCopier {
    private ContextCopier() {
    }

    public static void copy(@NotNull Project project, @NotNull String text) {
        copy(project, text, null);
    }

    /** With a {@code rag/retrieve} intent (null: the server's default, a question). */
    public static void copy(@NotNull Project project, @NotNull String text, @Nullable RetrieveParams.Intent intent) {
        new Task.Backgroundable(project, "Retrieving project context", true) {
            @Override
            public void run(@NotNull ProgressIndicator indicator) {
                RaglsProjectService service = RaglsProjectService.getInstance(project);
                RagChat.Prepared p = RagChat.prepare(text, RaglsSettings.getInstance().chatOptions().withIntent(intent),
                        service.retriever(indicator::isCanceled));
                ApplicationManager.getApplication().invokeLater(
                        () -> CopyPasteManager.getInstance().setContents(new StringSelection(p.sentText())));
                String message = p.ragNote() == null
                        ? "Copied the message with project context from " + p.sources().size() + " source(s)."
                        : "Copied the message without project context. " + p.ragNote();
                NotificationGroupManager.getInstance().getNotificationGroup(RaglsProjectService.NOTIFICATION_GROUP)
                        .createNotification(message, p.ragNote() == null ? NotificationType.INFORMATION : NotificationType.WARNING)
                        .notify(project);
            }
        }.queue();
    }
}
