package dev.ragls.intellij.lsp;

import com.intellij.execution.configurations.GeneralCommandLine;
import com.intellij.execution.process.OSProcessHandler;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.vfs.VirtualFile;
import com.redhat.devtools.lsp4ij.server.CannotStartProcessException;
import com.redhat.devtools.lsp4ij.server.OSProcessStreamConnectionProvider;
import dev.ragls.core.server.ProcessWatch;
import dev.ragls.core.server.ServerLocator;
import dev.ragls.intellij.RaglsProjectService;
import dev.ragls.intellij.settings.RaglsSettings;
import org.jetbrains.annotations.NotNull;

import java.nio.charset.StandardCharsets;

/**
 * Starts {@code ragls} (no arguments = stdio LSP) in the project folder, copies its stderr to the
 * ragls log and reports its exit to {@link RaglsProjectService}, which restarts it with backoff after
 * a crash.
 *
 * <p>Nothing is attached after LSP4IJ's {@code startNotify()}: stderr arrives through LSP4IJ's own
 * listener (registered before the process starts) via {@link #addLogErrorHandler}, and the exit is
 * watched on the {@link Process} itself ({@link ProcessWatch}), which also reports a process that died
 * before the watch was set up.
 */
public final class RaglsConnectionProvider extends OSProcessStreamConnectionProvider {
    private final Project project;
    private final RaglsProjectService service;
    private volatile ProcessWatch watch;

    public RaglsConnectionProvider(@NotNull Project project) {
        this.project = project;
        this.service = RaglsProjectService.getInstance(project);
        addLogErrorHandler(service::log);
    }

    @Override
    public void start() throws CannotStartProcessException {
        // normally located by the service on a pooled thread just before; LSP4IJ's own restart re-locates
        ServerLocator.Result located = service.lastLocated();
        if (located == null || !located.found()) {
            located = service.locateServer();
        }
        if (!located.found()) {
            service.onServerMissing(located);
            throw new CannotStartProcessException(located.explain());
        }
        GeneralCommandLine cl = new GeneralCommandLine(located.path().toString())
                .withParentEnvironmentType(GeneralCommandLine.ParentEnvironmentType.CONSOLE)
                .withCharset(StandardCharsets.UTF_8);
        if (project.getBasePath() != null) {
            cl.withWorkDirectory(project.getBasePath());
        }
        setCommandLine(cl);
        long generation = service.onProcessStarting(located);
        long startedAt = System.nanoTime();
        super.start();
        OSProcessHandler handler = getProcessHandler();
        if (handler != null) {
            watch = ProcessWatch.watch(handler.getProcess(), startedAt,
                    (code, expected, uptime) -> service.onProcessTerminated(generation, code, expected, uptime));
        }
    }

    /**
     * LSP4IJ calls this both to stop a healthy server and to clean up after one that died; only the
     * first makes the exit expected (see {@link ProcessWatch#expectExit()}).
     */
    @Override
    public void stop() {
        ProcessWatch w = watch;
        if (w != null) {
            w.expectExit();
        }
        super.stop();
    }

    /** Sent as {@code initializationOptions}; the same object answers {@code workspace/configuration}. */
    @Override
    public Object getInitializationOptions(VirtualFile rootUri) {
        return RaglsSettings.getInstance().clientSettings().toServerSettings();
    }
}
