// Test-only signature stub of com.intellij.openapi.startup.ProjectActivity from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.startup;

import com.intellij.openapi.project.Project;
import kotlin.Unit;
import kotlin.coroutines.Continuation;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

public interface ProjectActivity {
    @Nullable Object execute(@NotNull Project project, @NotNull Continuation<? super Unit> continuation);
}
