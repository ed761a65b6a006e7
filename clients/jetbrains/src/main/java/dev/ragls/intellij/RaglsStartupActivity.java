package dev.ragls.intellij;

import com.intellij.openapi.project.Project;
import com.intellij.openapi.startup.ProjectActivity;
import kotlin.Unit;
import kotlin.coroutines.Continuation;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

/** Starts ragls when a project opens (ProjectActivity implemented from Java: no suspension). */
public final class RaglsStartupActivity implements ProjectActivity {
    @Override
    public @Nullable Object execute(@NotNull Project project, @NotNull Continuation<? super Unit> continuation) {
        RaglsProjectService.getInstance(project).start();
        return Unit.INSTANCE;
    }
}
