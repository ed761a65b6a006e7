package dev.ragls.core.server;

import dev.ragls.core.status.ServerState;
import dev.ragls.core.status.StatusModel;

import java.time.Duration;

/**
 * The ragls lifecycle as the plugin sees it, folded from three sources that arrive in any order:
 * what the plugin itself does (start, stop, restart), the LSP client host's status transitions
 * (LSP4IJ's {@code handleServerStatusChanged}, including stops from its own UI), and process exits
 * ({@link ProcessWatch}). It keeps the {@link StatusModel} honest and tells the adapter what to do.
 * Thread-safe; the IDE adapter only maps IDE types onto these calls.
 */
public final class ServerLifecycle {
    /** The host's server status, reduced to what matters here (LSP4IJ {@code ServerStatus}). */
    public enum HostStatus {
        STARTING, STARTED, STOPPING, STOPPED, OTHER
    }

    /** What the adapter should do after a process exit. */
    public record Decision(Kind kind, Duration delay) {
        public enum Kind {
            /** Nothing: the exit was asked for (or the plugin is shutting down). */
            NONE,
            /** Restart after {@link #delay()}. */
            RESTART,
            /** Too many crashes in a row: stop trying and tell the user. */
            GIVE_UP
        }

        static final Decision NONE = new Decision(Kind.NONE, Duration.ZERO);
    }

    public static final String STOPPED_BY_HOST = "Stopped from LSP4IJ (Language Servers view or LSP console). "
            + "Use Restart Server to start it again.";
    public static final String DISABLED_IN_HOST = "ragls is disabled in Settings | Languages & Frameworks | "
            + "Language Servers. Enable it there, then use Restart Server.";

    private final StatusModel status;
    private final Backoff backoff;
    /** Identifies the latest process: exits of older ones (a restart's old server) change nothing. */
    private long generation;
    /** The plugin itself is stopping the server (restart, settings): the host's "stopped" is ours. */
    private boolean pluginStopping;

    public ServerLifecycle(StatusModel status, Backoff backoff) {
        this.status = status;
        this.backoff = backoff;
    }

    public StatusModel status() {
        return status;
    }

    public Backoff backoff() {
        return backoff;
    }

    /** The plugin asks the host to start ragls at {@code located}. */
    public synchronized void starting(String detail) {
        status.setServerState(ServerState.STARTING, detail);
    }

    /** A new server process is being launched; returns its generation for {@link #processExited}. */
    public synchronized long processStarted(String detail) {
        status.setServerState(ServerState.STARTING, detail);
        return ++generation;
    }

    /** The plugin is about to stop the server itself (restart, settings change). */
    public synchronized void pluginStopping() {
        pluginStopping = true;
    }

    /** The host refused to start ragls because the user disabled it there. */
    public synchronized void refusedByHost() {
        status.setServerState(ServerState.STOPPED, DISABLED_IN_HOST);
    }

    public synchronized void notFound(String explanation) {
        status.setServerState(ServerState.NOT_FOUND, explanation);
    }

    public synchronized void disabled() {
        status.setServerState(ServerState.DISABLED, null);
    }

    /** The user stopped ragls from the plugin's own actions. */
    public synchronized void stoppedByUser() {
        status.setServerState(ServerState.STOPPED, "Stopped from the IDE.");
    }

    /** A user-requested restart forgets earlier crashes. */
    public synchronized void userRestart() {
        backoff.reset();
    }

    /**
     * A status transition reported by the host. Returns true when the server just became usable
     * (the adapter then asks {@code rag/indexStatus}).
     */
    public synchronized boolean hostStatus(HostStatus s) {
        ServerState now = status.serverState();
        switch (s) {
            case STARTING:
                // a start from the host's own UI; keep a pending crash restart's state as it is
                if (now == ServerState.STOPPED || now == ServerState.RUNNING) {
                    status.setServerState(ServerState.STARTING, null);
                }
                return false;
            case STARTED:
                pluginStopping = false;
                status.setServerState(ServerState.RUNNING, null);
                return true;
            case STOPPED:
                if (pluginStopping) {
                    // our own restart or settings change: the plugin already set the state
                    pluginStopping = false;
                    return false;
                }
                // a stop nobody in the plugin asked for (the host's Stop button): say so, so that
                // nothing calls the server and silently starts it again
                if (now == ServerState.RUNNING || now == ServerState.STARTING) {
                    status.setServerState(ServerState.STOPPED, STOPPED_BY_HOST);
                }
                return false;
            default:
                return false;
        }
    }

    /** The process of {@code processGeneration} exited; decides whether to restart it. */
    public synchronized Decision processExited(long processGeneration, int exitCode, boolean expected, Duration uptime,
                                               boolean shuttingDown) {
        if (shuttingDown || processGeneration != generation) {
            return Decision.NONE;
        }
        ServerState now = status.serverState();
        if (expected) {
            if (!pluginStopping && (now == ServerState.RUNNING || now == ServerState.STARTING)) {
                status.setServerState(ServerState.STOPPED, STOPPED_BY_HOST);
            }
            return Decision.NONE;
        }
        Duration delay = backoff.onCrash(uptime);
        if (delay == null) {
            status.setServerState(ServerState.FAILED, "Exit code " + exitCode + "; gave up after "
                    + (backoff.attempts() - 1) + " restarts.");
            return new Decision(Decision.Kind.GIVE_UP, Duration.ZERO);
        }
        status.setServerState(ServerState.RESTARTING, "Exit code " + exitCode + "; restarting in "
                + Math.max(1, delay.toSeconds()) + " s (attempt " + backoff.attempts() + ").");
        return new Decision(Decision.Kind.RESTART, delay);
    }

    /** Whether {@code rag/*} requests may go to the server (they must never start a stopped one). */
    public synchronized boolean serverUsable() {
        return status.serverState() == ServerState.RUNNING;
    }
}
