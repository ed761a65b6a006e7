package dev.ragls.intellij.lsp;

import com.intellij.execution.configurations.GeneralCommandLine;
import com.intellij.execution.process.ProcessEvent;
import com.intellij.execution.process.ProcessListener;
import com.intellij.execution.process.ProcessOutputType;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.util.Key;
import com.intellij.openapi.vfs.VirtualFile;
import com.redhat.devtools.lsp4ij.server.CannotStartProcessException;
import com.redhat.devtools.lsp4ij.server.OSProcessStreamConnectionProvider;
import dev.ragls.core.server.ServerLocator;
import dev.ragls.intellij.RaglsProjectService;
import dev.ragls.intellij.settings.RaglsSettings;
import org.jetbrains.annotations.NotNull;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Starts {@code ragls} (no arguments = stdio LSP) in the project folder, copies its stderr to the
 * ragls log and reports unexpected exits to {@link RaglsProjectService}, which restarts with backoff.
 */
public final class RaglsConnectionProvider extends OSProcessStreamConnectionProvider {
    private final RaglsProjectService service;
    private final ServerLocator.Result located;
    private volatile boolean stopRequested;
    private volatile long startedAt;

    public RaglsConnectionProvider(@NotNull Project project) {
        this.service = RaglsProjectService.getInstance(project);
        this.located = service.locateServer();
        if (located.found()) {
            GeneralCommandLine cl = new GeneralCommandLine(located.path().toString())
                    .withParentEnvironmentType(GeneralCommandLine.ParentEnvironmentType.CONSOLE)
                    .withCharset(StandardCharsets.UTF_8);
            if (project.getBasePath() != null) {
                cl.withWorkDirectory(project.getBasePath());
            }
            setCommandLine(cl);
        }
    }

    @Override
    public void start() throws CannotStartProcessException {
        if (!located.found()) {
            service.onServerMissing(located);
            throw new CannotStartProcessException(located.explain());
        }
        service.onProcessStarting(located);
        super.start();
        startedAt = System.nanoTime();
        getProcessHandler().addProcessListener(new ProcessListener() {
            @Override
            public void startNotified(@NotNull ProcessEvent event) {
            }

            @Override
            public void onTextAvailable(@NotNull ProcessEvent event, @NotNull Key outputType) {
                if (ProcessOutputType.isStderr(outputType)) {
                    service.log(event.getText());
                }
            }

            @Override
            public void processWillTerminate(@NotNull ProcessEvent event, boolean willBeDestroyed) {
            }

            @Override
            public void processTerminated(@NotNull ProcessEvent event) {
                Duration uptime = Duration.ofNanos(System.nanoTime() - startedAt);
                service.onProcessTerminated(event.getExitCode(), stopRequested, uptime);
            }
        });
    }

    /**
     * LSP4IJ calls this both to stop a healthy server and to clean up after one that died; only
     * the first is an expected exit (so a crash is still restarted even if the cleanup wins the
     * race with the process-terminated event).
     */
    @Override
    public void stop() {
        Process p = getProcessHandler() == null ? null : getProcessHandler().getProcess();
        if (p != null && p.isAlive()) {
            stopRequested = true;
        }
        super.stop();
    }

    /** Sent as {@code initializationOptions}; the same object answers {@code workspace/configuration}. */
    @Override
    public Object getInitializationOptions(VirtualFile rootUri) {
        return GsonBridge.toGson(RaglsSettings.getInstance().clientSettings().toServerSettings());
    }
}
