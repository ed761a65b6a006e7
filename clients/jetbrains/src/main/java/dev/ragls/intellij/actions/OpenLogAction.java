package dev.ragls.intellij.actions;

import com.intellij.openapi.actionSystem.AnActionEvent;
import com.intellij.openapi.project.Project;
import dev.ragls.intellij.RaglsProjectService;
import org.jetbrains.annotations.NotNull;

public final class OpenLogAction extends RaglsAction {
    @Override
    void perform(@NotNull AnActionEvent e, @NotNull Project project, @NotNull RaglsProjectService service) {
        service.openLog();
    }
}
