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
import com.intellij.util.concurrency.AppExecutorUtil;
import com.redhat.devtools.lsp4ij.LanguageServerManager;
import dev.ragls.core.chat.RagChat;
import dev.ragls.core.json.Json;
import dev.ragls.core.protocol.IndexStatus;
import dev.ragls.core.protocol.ProgressEvent;
import dev.ragls.core.protocol.ReindexResult;
import dev.ragls.core.protocol.RetrieveParams;
import dev.ragls.core.protocol.RetrieveResult;
import dev.ragls.core.server.Backoff;
import dev.ragls.core.server.ServerLocator;
import dev.ragls.core.status.ServerState;
import dev.ragls.core.status.StatusModel;
import dev.ragls.intellij.lsp.GsonBridge;
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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One per project: owns the ragls lifecycle as the plugin sees it (locate, start through LSP4IJ,
 * restart with backoff after a crash, notify when missing), the status model behind the status
 * bar, the log file, and typed access to the {@code rag/*} requests.
 */
public final class RaglsProjectService implements Disposable {
    public static final String SERVER_ID = "ragls";
    public static final String NOTIFICATION_GROUP = "ragls";
    private static final Duration RETRIEVE_TIMEOUT = Duration.ofSeconds(15);

    private final Project project;
    private final StatusModel status = new StatusModel();
    private final Backoff backoff = Backoff.defaults();
    private final RaglsLog log;
    private volatile ScheduledFuture<?> pendingRestart;
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

    public ServerLocator.Result locateServer() {
        String base = project.getBasePath();
        return ServerLocator.locate(RaglsSettings.getInstance().getState().serverPath, base == null ? null : Path.of(base));
    }

    /** Starts ragls if RAG is enabled and the executable is found. */
    public void start() {
        cancelPendingRestart();
        if (disposed) {
            return;
        }
        if (!RaglsSettings.getInstance().getState().ragEnabled) {
            status.setServerState(ServerState.DISABLED, null);
            return;
        }
        ServerLocator.Result found = locateServer();
        if (!found.found()) {
            onServerMissing(found);
            return;
        }
        status.setServerState(ServerState.STARTING, found.explain());
        LanguageServerManager.getInstance(project).start(SERVER_ID,
                new LanguageServerManager.StartOptions().setForceStart(true));
    }

    /** User-requested restart: forgets earlier crashes. */
    public void restart() {
        backoff.reset();
        missingNotified = false;
        stop(false);
        start();
    }

    public void stop(boolean byUser) {
        cancelPendingRestart();
        LanguageServerManager.getInstance(project).stop(SERVER_ID,
                new LanguageServerManager.StopOptions().setWillDisable(false));
        if (byUser) {
            status.setServerState(ServerState.STOPPED, "Stopped from the IDE.");
        }
    }

    /** Called by the settings page after Apply. */
    public void settingsChanged(boolean serverChanged) {
        if (serverChanged) {
            if (RaglsSettings.getInstance().getState().ragEnabled) {
                restart();
            } else {
                stop(false);
                status.setServerState(ServerState.DISABLED, null);
            }
            return;
        }
        // the server pulls the ragls section of workspace/configuration after this notification
        server().thenAccept(s -> s.getWorkspaceService().didChangeConfiguration(new DidChangeConfigurationParams(
                GsonBridge.toGson(RaglsSettings.getInstance().clientSettings().toServerSettings()))));
    }

    public void onServerMissing(ServerLocator.Result result) {
        status.setServerState(ServerState.NOT_FOUND, result.explain());
        log("ragls not found: " + result.explain());
        if (missingNotified || disposed) {
            return;
        }
        missingNotified = true;
        Notification n = NotificationGroupManager.getInstance().getNotificationGroup(NOTIFICATION_GROUP)
                .createNotification("ragls server not found",
                        result.explain() + "<br>Install it into the project's virtualenv "
                                + "(<code>.venv/bin/pip install ragls</code>, or <code>pip install -e</code> "
                                + "a ragls checkout) or set its path in Settings | Tools | ragls.",
                        NotificationType.WARNING);
        n.addAction(NotificationAction.createSimpleExpiring("Set path\u2026",
                () -> ShowSettingsUtil.getInstance().showSettingsDialog(project, RaglsConfigurable.class)));
        n.addAction(NotificationAction.createSimple("Copy install command", () -> CopyPasteManager.getInstance()
                .setContents(new StringSelection("python -m venv .venv && .venv/bin/pip install ragls"))));
        n.addAction(NotificationAction.createSimpleExpiring("Retry", this::restart));
        n.notify(project);
    }

    public void onProcessStarting(ServerLocator.Result located) {
        status.setServerState(ServerState.STARTING, located.explain());
        log("starting " + located.path() + " (" + located.source() + ")");
    }

    public void onServerStarted() {
        status.setServerState(ServerState.RUNNING, null);
        log("initialized");
        refreshIndexStatus();
    }

    /** From the process listener: an exit we did not ask for is a crash, restarted with backoff. */
    public void onProcessTerminated(int exitCode, boolean expected, Duration uptime) {
        log("process exited with code " + exitCode + " after " + uptime.toSeconds() + " s" + (expected ? "" : " (unexpected)"));
        if (expected || disposed || project.isDisposed()) {
            return;
        }
        Duration delay = backoff.onCrash(uptime);
        if (delay == null) {
            status.setServerState(ServerState.FAILED, "Exit code " + exitCode + "; gave up after "
                    + (backoff.attempts() - 1) + " restarts.");
            Notification n = NotificationGroupManager.getInstance().getNotificationGroup(NOTIFICATION_GROUP)
                    .createNotification("ragls keeps crashing", "Exit code " + exitCode
                            + ". Automatic restarts stopped; see the log.", NotificationType.ERROR);
            n.addAction(NotificationAction.createSimple("Open log", this::openLog));
            n.addAction(NotificationAction.createSimpleExpiring("Restart", this::restart));
            n.notify(project);
            return;
        }
        status.setServerState(ServerState.RESTARTING, "Exit code " + exitCode + "; restarting in "
                + Math.max(1, delay.toSeconds()) + " s (attempt " + backoff.attempts() + ").");
        cancelPendingRestart();
        pendingRestart = AppExecutorUtil.getAppScheduledExecutorService().schedule(() -> {
            if (!disposed && !project.isDisposed()) {
                start();
            }
        }, delay.toMillis(), TimeUnit.MILLISECONDS);
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

    private CompletableFuture<RaglsServerApi> server() {
        if (status.serverState() != ServerState.RUNNING) {
            return CompletableFuture.failedFuture(new IllegalStateException("ragls is not running"));
        }
        return LanguageServerManager.getInstance(project).getLanguageServer(SERVER_ID).thenApply(item -> {
            if (item == null || !(item.getServer() instanceof RaglsServerApi)) {
                throw new CompletionException(new IllegalStateException("ragls is not running"));
            }
            return (RaglsServerApi) item.getServer();
        });
    }

    public CompletableFuture<RetrieveResult> retrieve(RetrieveParams params) {
        return server().thenCompose(s -> s.retrieve(GsonBridge.toGson(params.toJson())))
                .thenApply(j -> RetrieveResult.fromJson(GsonBridge.toMap(j)));
    }

    public CompletableFuture<IndexStatus> refreshIndexStatus() {
        CompletableFuture<IndexStatus> f = server().thenCompose(s -> s.indexStatus(new JsonObject()))
                .thenApply(j -> IndexStatus.fromJson(GsonBridge.toMap(j)));
        f.thenAccept(status::onStatus);
        return f;
    }

    public CompletableFuture<ReindexResult> reindex(boolean full) {
        log((full ? "full " : "") + "reindex requested");
        return server().thenCompose(s -> s.reindex(GsonBridge.toGson(Json.obj("full", full))))
                .thenApply(j -> ReindexResult.fromJson(GsonBridge.toMap(j)));
    }

    /** A blocking retriever for {@link RagChat} (called on a background thread), or null when ragls is down. */
    public RagChat.Retriever retriever() {
        if (status.serverState() != ServerState.RUNNING) {
            return null;
        }
        return params -> {
            try {
                return retrieve(params).get(RETRIEVE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                Throwable c = e.getCause() instanceof CompletionException && e.getCause().getCause() != null
                        ? e.getCause().getCause() : e.getCause();
                throw new Exception(c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage(), c);
            } catch (TimeoutException e) {
                throw new Exception("rag/retrieve took longer than " + RETRIEVE_TIMEOUT.toSeconds() + " s", e);
            }
        };
    }

    // ------------------------------------------------------------------ log

    public void log(String text) {
        log.append(text);
    }

    public Path logFile() {
        return log.file();
    }

    public void openLog() {
        ApplicationManager.getApplication().invokeLater(() -> {
            VirtualFile vf = LocalFileSystem.getInstance().refreshAndFindFileByNioFile(log.file());
            if (vf != null && !project.isDisposed()) {
                vf.refresh(false, false);
                FileEditorManager.getInstance(project).openFile(vf, true);
            }
        });
    }

    @Override
    public void dispose() {
        disposed = true;
        cancelPendingRestart();
        log.close();
    }
}
