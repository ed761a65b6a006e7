package dev.ragls.core;

import dev.ragls.core.server.Backoff;
import dev.ragls.core.server.RequestAwait;
import dev.ragls.core.server.ServerLifecycle;
import dev.ragls.core.server.ServerLifecycle.Decision;
import dev.ragls.core.server.ServerLifecycle.HostStatus;
import dev.ragls.core.status.ServerState;
import dev.ragls.core.status.StatusModel;
import dev.ragls.core.status.StatusText;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Issue 18: the status bar follows every lifecycle transition, whoever caused it. */
class ServerLifecycleTest {
    private final StatusModel status = new StatusModel();
    private final ServerLifecycle life = new ServerLifecycle(status,
            new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(8), 2.0, 3, Duration.ofMinutes(2)));

    private long gen;

    private void running() {
        life.starting("Using /usr/bin/ragls (PATH).");
        gen = life.processStarted("Using /usr/bin/ragls (PATH).");
        assertFalse(life.hostStatus(HostStatus.STARTING));
        assertTrue(life.hostStatus(HostStatus.STARTED), "started: ask rag/indexStatus");
        assertEquals(ServerState.RUNNING, status.serverState());
        assertTrue(life.serverUsable());
    }

    @Test
    void aStopFromTheHostsUiIsMirroredAndNothingCallsTheServer() {
        running();
        life.hostStatus(HostStatus.STOPPING);
        assertEquals(ServerState.RUNNING, status.serverState(), "stopping alone changes nothing");
        life.hostStatus(HostStatus.STOPPED);
        assertEquals(ServerState.STOPPED, status.serverState());
        assertEquals(StatusText.OFF, status.text());
        assertTrue(status.details().contains(ServerLifecycle.STOPPED_BY_HOST), status.details().toString());
        assertFalse(life.serverUsable(), "a retrieve now must fail fast instead of restarting the server");
        // the process exit that follows (asked for by LSP4IJ) changes nothing and restarts nothing
        assertEquals(Decision.Kind.NONE, life.processExited(gen, 0, true, Duration.ofMinutes(5), false).kind());
        assertEquals(ServerState.STOPPED, status.serverState());
        // a start from the host's UI brings it back
        life.hostStatus(HostStatus.STARTING);
        assertEquals(ServerState.STARTING, status.serverState());
        life.hostStatus(HostStatus.STARTED);
        assertTrue(life.serverUsable());
    }

    @Test
    void anExpectedExitSeenBeforeTheHostsStatusStillStops() {
        running();
        assertEquals(Decision.Kind.NONE, life.processExited(gen, 0, true, Duration.ofSeconds(30), false).kind());
        assertEquals(ServerState.STOPPED, status.serverState());
        life.hostStatus(HostStatus.STOPPED);
        assertEquals(ServerState.STOPPED, status.serverState());
    }

    @Test
    void aCrashRestartsWithBackoffEvenAfterTheHostSaysStopped() {
        running();
        life.hostStatus(HostStatus.STOPPED); // LSP4IJ may report the stop before the exit arrives
        Decision d = life.processExited(gen, 1, false, Duration.ofMillis(50), false);
        assertEquals(Decision.Kind.RESTART, d.kind());
        assertEquals(Duration.ofSeconds(1), d.delay());
        assertEquals(ServerState.RESTARTING, status.serverState());
        assertEquals(StatusText.ERROR, status.text());
        life.hostStatus(HostStatus.STOPPED);
        assertEquals(ServerState.RESTARTING, status.serverState(), "a late 'stopped' does not hide the pending restart");
        assertEquals(Duration.ofSeconds(2), life.processExited(gen, 1, false, Duration.ZERO, false).delay());
        assertEquals(Duration.ofSeconds(4), life.processExited(gen, 1, false, Duration.ZERO, false).delay());
        assertEquals(Decision.Kind.GIVE_UP, life.processExited(gen, 1, false, Duration.ZERO, false).kind());
        assertEquals(ServerState.FAILED, status.serverState());
        life.userRestart();
        assertEquals(Duration.ofSeconds(1), life.processExited(gen, 1, false, Duration.ZERO, false).delay());
    }

    @Test
    void aRestartByThePluginIsNotMistakenForAStopOrACrash() {
        running();
        long old = gen;
        life.userRestart();
        life.pluginStopping();
        life.starting("Using /usr/bin/ragls (PATH).");
        life.hostStatus(HostStatus.STOPPING);
        life.hostStatus(HostStatus.STOPPED); // the old server's stop, caused by the plugin
        assertEquals(ServerState.STARTING, status.serverState());
        gen = life.processStarted("Using /usr/bin/ragls (PATH).");
        life.hostStatus(HostStatus.STARTING);
        assertTrue(life.hostStatus(HostStatus.STARTED));
        // the old process's exit arrives late: expected or not, it concerns a server that is gone
        assertEquals(Decision.Kind.NONE, life.processExited(old, 0, true, Duration.ofMinutes(1), false).kind());
        assertEquals(Decision.Kind.NONE, life.processExited(old, 1, false, Duration.ZERO, false).kind());
        assertEquals(ServerState.RUNNING, status.serverState());
        assertTrue(life.serverUsable());
        // and a later stop from LSP4IJ's UI is mirrored again
        life.hostStatus(HostStatus.STOPPED);
        assertEquals(ServerState.STOPPED, status.serverState());
    }

    @Test
    void disabledInTheHostIsShownNotThrown() {
        life.refusedByHost();
        assertEquals(ServerState.STOPPED, status.serverState());
        assertEquals(StatusText.OFF, status.text());
        assertTrue(status.details().contains(ServerLifecycle.DISABLED_IN_HOST));
        assertFalse(life.serverUsable());
    }

    @Test
    void shutdownExitsRestartNothing() {
        running();
        assertEquals(Decision.Kind.NONE, life.processExited(gen, 137, false, Duration.ZERO, true).kind());
        assertEquals(ServerState.RUNNING, status.serverState());
    }

    @Test
    void requestAwaitUnwrapsFailuresAndCancelsOnInterrupt() throws Exception {
        CompletableFuture<String> failed = CompletableFuture.supplyAsync(() -> {
            throw new CompletionException(new IOException("server gone"));
        });
        IOException e = assertThrows(IOException.class, () -> RequestAwait.await(failed, Duration.ofSeconds(5), null, "x"));
        assertEquals("server gone", e.getMessage());

        CompletableFuture<String> never = new CompletableFuture<>();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                RequestAwait.await(never, Duration.ofSeconds(30), null, "x");
            } catch (Throwable ex) {
                thrown.set(ex);
            }
        });
        t.start();
        Thread.sleep(200);
        t.interrupt();
        t.join(5000);
        assertTrue(thrown.get() instanceof InterruptedException, String.valueOf(thrown.get()));
        assertTrue(never.isCancelled(), "the request future is cancelled (LSP4J then sends $/cancelRequest)");
        CompletableFuture<String> done = CompletableFuture.completedFuture("ok");
        assertSame("ok", RequestAwait.await(done, Duration.ofSeconds(1), () -> false, "x"));
    }
}
