package dev.ragls.intellij;

import com.google.gson.JsonObject;
import com.intellij.notification.Notification;
import com.intellij.notification.NotificationAction;
import com.intellij.notification.NotificationGroupManager;
import com.intellij.notification.NotificationType;
import com.intellij.openapi.Disposable;
import com.intellij.openapi.application.ApplicationManager;
import com.intellij.openapi.fileEditor.FileEditorManager;
import com.intellij.openapi.ide.CopyPasteManager;
import com.intellij.openapi.options.ShowSettingsUtil;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.vfs.LocalFileSystem;
import com.intellij.openapi.vfs.VirtualFile;
import com.intellij.util.EnvironmentUtil;
import com.intellij.util.concurrency.AppExecutorUtil;
import com.redhat.devtools.lsp4ij.LanguageServerManager;
import com.redhat.devtools.lsp4ij.ServerStatus;
import com.redhat.devtools.lsp4ij.server.LanguageServerException;
import dev.ragls.core.chat.RagChat;
import dev.ragls.core.protocol.FeedbackResult;
import dev.ragls.core.protocol.IndexStatus;
import dev.ragls.core.protocol.ProgressEvent;
import dev.ragls.core.protocol.ReindexResult;
import dev.ragls.core.protocol.RetrieveParams;
import dev.ragls.core.protocol.RetrieveResult;
import dev.ragls.core.server.Backoff;
import dev.ragls.core.server.RequestAwait;
import dev.ragls.core.server.ServerLifecycle;
import dev.ragls.core.server.ServerLocator;
import dev.ragls.core.status.StatusModel;
import dev.ragls.intellij.lsp.RaglsServerApi;
import dev.ragls.intellij.settings.RaglsConfigurable;
import dev.ragls.intellij.settings.RaglsSettings;
import org.eclipse.lsp4j.DidChangeConfigurationParams;
import org.jetbrains.annotations.NotNull;

import java.awt.datatransfer.StringSelection;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One per project: drives the ragls lifecycle (locate, start through LSP4IJ, restart with backoff
 * after a crash, notify when missing) with the decisions taken by the core's {@link ServerLifecycle},
 * owns the status model behind the status bar and the log file, and gives typed access to the
 * {@code rag/*} requests. File checks and start-up run on pooled threads, never on the EDT.
 */
public final class RaglsProjectService implements Disposable {
    public static final String SERVER_ID = "ragls";
    public static final String NOTIFICATION_GROUP = "ragls";
    private static final Duration RETRIEVE_TIMEOUT = Duration.ofSeconds(15);

    private final Project project;
    private final StatusModel status = new StatusModel();
    private final ServerLifecycle lifecycle = new ServerLifecycle(status, Backoff.defaults());
    private final RaglsLog log;
    private volatile ScheduledFuture<?> pendingRestart;
    private volatile ServerLocator.Result located;
    private volatile boolean missingNotified;
    private volatile boolean disposed;

    public RaglsProjectService(@NotNull Project project) {
        this.project = project;
        this.log = new RaglsLog(project);
    }

    public static RaglsProjectService getInstance(@NotNull Project project) {
        return project.getService(RaglsProjectService.class);
    }

    public StatusModel status() {
        return status;
    }

    public Project project() {
        return project;
    }

    // ------------------------------------------------------------------ lifecycle

    /**
     * Looks for ragls (file checks): never on the EDT. PATH comes from the shell environment, the
     * one the process is launched with (a GUI-launched IDE's own PATH may lack ~/.local/bin).
     */
    public ServerLocator.Result locateServer() {
        String base = project.getBasePath();
        RaglsSettings settings = RaglsSettings.getInstance();
        ServerLocator.Result r = ServerLocator.locate(settings.getState().serverPath, base == null ? null : Path.of(base),
                EnvironmentUtil.getEnvironmentMap(), settings.trustedFolders());
        located = r;
        return r;
    }

    /** The result of the latest {@link #locateServer()}, or null before the first one. */
    public ServerLocator.Result lastLocated() {
        return located;
    }

    /** Starts ragls if RAG is enabled and the executable is found; returns at once (work runs pooled). */
    public void start() {
        cancelPendingRestart();
        ApplicationManager.getApplication().executeOnPooledThread(this::startNow);
    }

    private void startNow() {
        if (disposed || project.isDisposed()) {
            return;
        }
        if (!RaglsSettings.getInstance().getState().ragEnabled) {
            lifecycle.disabled();
            return;
        }
        ServerLocator.Result found = locateServer();
        if (!found.found()) {
            onServerMissing(found);
            return;
        }
        lifecycle.starting(found.explain());
        try {
            LanguageServerManager.getInstance(project).start(SERVER_ID,
                    new LanguageServerManager.StartOptions().setForceStart(true));
        } catch (LanguageServerException e) {
            // the user disabled ragls in LSP4IJ's Language Servers settings: respect it, say so
            log("LSP4IJ refused to start ragls: " + e.getMessage());
            lifecycle.refusedByHost();
        }
    }

    /** User-requested restart: forgets earlier crashes. */
    public void restart() {
        lifecycle.userRestart();
        missingNotified = false;
        stop(false);
        start();
    }

    public void stop(boolean byUser) {
        cancelPendingRestart();
        lifecycle.pluginStopping();
        LanguageServerManager.getInstance(project).stop(SERVER_ID,
                new LanguageServerManager.StopOptions().setWillDisable(false));
        if (byUser) {
            lifecycle.stoppedByUser();
        }
    }

    /** Called by the settings page after Apply. */
    public void settingsChanged(boolean serverChanged) {
        if (serverChanged) {
            if (RaglsSettings.getInstance().getState().ragEnabled) {
                restart();
            } else {
                stop(false);
                lifecycle.disabled();
            }
            return;
        }
        // the server pulls the ragls section of workspace/configuration after this notification
        server().thenAccept(s -> s.getWorkspaceService().didChangeConfiguration(new DidChangeConfigurationParams(
                RaglsSettings.getInstance().clientSettings().toServerSettings())));
    }

    public void onServerMissing(ServerLocator.Result result) {
        lifecycle.notFound(result.explain());
        log("ragls not found: " + result.explain());
        if (missingNotified || disposed) {
            return;
        }
        missingNotified = true;
        Notification n = NotificationGroupManager.getInstance().getNotificationGroup(NOTIFICATION_GROUP)
                .createNotification("ragls server not found",
                        escapeHtml(result.explain()) + "<br>Install it so that it is on your shell's PATH "
                                + "(<code>pipx install ragls</code>), or set its path in Settings | Tools | ragls.",
                        NotificationType.WARNING);
        n.addAction(NotificationAction.createSimpleExpiring("Set path\u2026",
                () -> ShowSettingsUtil.getInstance().showSettingsDialog(project, RaglsConfigurable.class)));
        n.addAction(NotificationAction.createSimple("Copy install command", () -> CopyPasteManager.getInstance()
                .setContents(new StringSelection("pipx install ragls"))));
        n.addAction(NotificationAction.createSimpleExpiring("Retry", this::restart));
        n.notify(project);
    }

    /** Returns the process generation to pass back to {@link #onProcessTerminated}. */
    public long onProcessStarting(ServerLocator.Result located) {
        log("starting " + located.path() + " (" + located.source() + ")");
        return lifecycle.processStarted(located.explain());
    }

    /** Every LSP4IJ status transition (from {@code LSPClientFeatures}), including stops from its own UI. */
    public void onHostStatus(@NotNull ServerStatus serverStatus) {
        ServerLifecycle.HostStatus mirrored = switch (serverStatus) {
            case starting -> ServerLifecycle.HostStatus.STARTING;
            case started -> ServerLifecycle.HostStatus.STARTED;
            case stopping -> ServerLifecycle.HostStatus.STOPPING;
            case stopped -> ServerLifecycle.HostStatus.STOPPED;
            default -> ServerLifecycle.HostStatus.OTHER;
        };
        if (mirrored != ServerLifecycle.HostStatus.OTHER) {
            log("LSP4IJ: " + serverStatus);
        }
        if (lifecycle.hostStatus(mirrored)) {
            refreshIndexStatus();
        }
    }

    /** From the process watch: an exit we did not ask for is a crash, restarted with backoff. */
    public void onProcessTerminated(long generation, int exitCode, boolean expected, Duration uptime) {
        log("process exited with code " + exitCode + " after " + uptime.toSeconds() + " s" + (expected ? "" : " (unexpected)"));
        ServerLifecycle.Decision d = lifecycle.processExited(generation, exitCode, expected, uptime,
                disposed || project.isDisposed());
        switch (d.kind()) {
            case GIVE_UP -> {
                Notification n = NotificationGroupManager.getInstance().getNotificationGroup(NOTIFICATION_GROUP)
                        .createNotification("ragls keeps crashing", "Exit code " + exitCode
                                + ". Automatic restarts stopped; see the log.", NotificationType.ERROR);
                n.addAction(NotificationAction.createSimple("Open log", this::openLog));
                n.addAction(NotificationAction.createSimpleExpiring("Restart", this::restart));
                n.notify(project);
            }
            case RESTART -> {
                cancelPendingRestart();
                pendingRestart = AppExecutorUtil.getAppScheduledExecutorService().schedule(() -> {
                    if (!disposed && !project.isDisposed()) {
                        startNow();
                    }
                }, d.delay().toMillis(), TimeUnit.MILLISECONDS);
            }
            default -> {
            }
        }
    }

    private void cancelPendingRestart() {
        ScheduledFuture<?> f = pendingRestart;
        if (f != null) {
            f.cancel(false);
            pendingRestart = null;
        }
    }

    public void onProgress(ProgressEvent event) {
        status.onProgress(event);
        if (event.isEnd()) {
            refreshIndexStatus();
        }
    }

    public void onStatus(IndexStatus s) {
        status.onStatus(s);
    }

    // ------------------------------------------------------------------ rag/* requests

    /** The running server; fails (never starts one) when ragls is not running. */
    private CompletableFuture<RaglsServerApi> server() {
        if (!lifecycle.serverUsable()) {
            return CompletableFuture.failedFuture(new IllegalStateException("ragls is not running"));
        }
        return LanguageServerManager.getInstance(project).getLanguageServer(SERVER_ID).thenApply(item -> {
            if (item == null || !(item.getServer() instanceof RaglsServerApi)) {
                throw new CompletionException(new IllegalStateException("ragls is not running"));
            }
            return (RaglsServerApi) item.getServer();
        });
    }

    public CompletableFuture<IndexStatus> refreshIndexStatus() {
        CompletableFuture<IndexStatus> f = server().thenCompose(s -> s.indexStatus(new JsonObject()))
                .thenApply(IndexStatus::fromJson);
        f.thenAccept(status::onStatus);
        return f;
    }

    public CompletableFuture<ReindexResult> reindex(boolean full) {
        log((full ? "full " : "") + "reindex requested");
        JsonObject params = new JsonObject();
        params.addProperty("full", full);
        return server().thenCompose(s -> s.reindex(params)).thenApply(ReindexResult::fromJson);
    }

    /**
     * A blocking retriever for {@link RagChat} (called on a background thread), or null when ragls is
     * down. A timeout, {@code cancelled} turning true or an interrupt cancels the request future LSP4J
     * returned, which sends {@code $/cancelRequest} to the server.
     */
    public RagChat.Retriever retriever(@NotNull BooleanSupplier cancelled) {
        if (!lifecycle.serverUsable()) {
            return null;
        }
        return params -> {
            long t0 = System.nanoTime();
            RaglsServerApi s = RequestAwait.await(server(), RETRIEVE_TIMEOUT, cancelled, "rag/retrieve");
            Duration left = RETRIEVE_TIMEOUT.minusNanos(System.nanoTime() - t0);
            CompletableFuture<JsonObject> request = s.retrieve(params.toJson());
            JsonObject answer = RequestAwait.await(request, left.isNegative() ? Duration.ZERO : left, cancelled, "rag/retrieve");
            return RetrieveResult.fromJson(answer);
        };
    }

    /**
     * A blocking {@code rag/feedback} sender for the chat panel's thumbs (called on a background
     * thread), or null when ragls is down. The rating goes to the running server: the one that gave
     * the answer, unless it was restarted since (then the server refuses the unknown id).
     */
    public RagChat.Rater rater() {
        if (!lifecycle.serverUsable()) {
            return null;
        }
        return params -> {
            long t0 = System.nanoTime();
            RaglsServerApi s = RequestAwait.await(server(), RETRIEVE_TIMEOUT, () -> false, "rag/feedback");
            Duration left = RETRIEVE_TIMEOUT.minusNanos(System.nanoTime() - t0);
            JsonObject answer = RequestAwait.await(s.feedback(params.toJson()), left.isNegative() ? Duration.ZERO : left,
                    () -> false, "rag/feedback");
            return FeedbackResult.fromJson(answer);
        };
    }

    // ------------------------------------------------------------------ log

    public void log(String text) {
        log.append(text);
    }

    public Path logFile() {
        return log.file();
    }

    /** Opens the log in an editor: the VFS refresh runs on a pooled thread, only the editor on the EDT. */
    public void openLog() {
        ApplicationManager.getApplication().executeOnPooledThread(() -> {
            VirtualFile vf = LocalFileSystem.getInstance().refreshAndFindFileByNioFile(log.file());
            if (vf == null) {
                return;
            }
            vf.refresh(false, false);
            ApplicationManager.getApplication().invokeLater(() -> {
                if (!project.isDisposed() && vf.isValid()) {
                    FileEditorManager.getInstance(project).openFile(vf, true);
                }
            });
        });
    }

    private static String escapeHtml(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    @Override
    public void dispose() {
        disposed = true;
        cancelPendingRestart();
        log.close();
    }
}
