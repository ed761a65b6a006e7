package dev.ragls.intellij.actions;

import com.intellij.openapi.actionSystem.ActionUpdateThread;
import com.intellij.openapi.actionSystem.AnAction;
import com.intellij.openapi.actionSystem.AnActionEvent;
import com.intellij.openapi.project.DumbAware;
import com.intellij.openapi.project.Project;
import dev.ragls.intellij.RaglsProjectService;
import org.jetbrains.annotations.NotNull;

/** Base for the Tools | ragls actions: enabled when a project is open. */
abstract class RaglsAction extends AnAction implements DumbAware {
    @Override
    public @NotNull ActionUpdateThread getActionUpdateThread() {
        return ActionUpdateThread.BGT;
    }

    @Override
    public void update(@NotNull AnActionEvent e) {
        e.getPresentation().setEnabledAndVisible(e.getProject() != null);
    }

    @Override
    public void actionPerformed(@NotNull AnActionEvent e) {
        Project project = e.getProject();
        if (project != null) {
            perform(e, project, RaglsProjectService.getInstance(project));
        }
    }

    abstract void perform(@NotNull AnActionEvent e, @NotNull Project project, @NotNull RaglsProjectService service);
}
