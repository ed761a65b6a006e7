package dev.ragls.intellij.ui;

import com.intellij.openapi.project.DumbAware;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.wm.ToolWindow;
import com.intellij.openapi.wm.ToolWindowFactory;
import com.intellij.ui.content.Content;
import com.intellij.ui.content.ContentFactory;
import org.jetbrains.annotations.NotNull;

/** The "ragls" tool window with the chat panel. */
public final class RaglsToolWindowFactory implements ToolWindowFactory, DumbAware {
    @Override
    public void createToolWindowContent(@NotNull Project project, @NotNull ToolWindow toolWindow) {
        RaglsChatPanel panel = new RaglsChatPanel(project);
        Content content = ContentFactory.getInstance().createContent(panel, "Chat", false);
        content.setDisposer(panel);
        toolWindow.getContentManager().addContent(content);
    }
}
