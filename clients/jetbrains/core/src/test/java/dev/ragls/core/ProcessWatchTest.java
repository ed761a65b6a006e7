package dev.ragls.core;

import dev.ragls.core.server.ProcessWatch;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Issue 18: a server that dies at once is still seen as a crash; an asked-for stop is not. Real processes. */
class ProcessWatchTest {
    private record Exit(int code, boolean expected, Duration uptime) {
    }

    @Test
    void aProcessThatDiedBeforeTheWatchStartedIsACrash() throws Exception {
        long started = System.nanoTime();
        Process p = new ProcessBuilder("sh", "-c", "exit 7").start();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        assertFalse(p.isAlive());
        CompletableFuture<Exit> exit = new CompletableFuture<>();
        AtomicInteger calls = new AtomicInteger();
        ProcessWatch w = ProcessWatch.watch(p, started, (code, expected, uptime) -> {
            calls.incrementAndGet();
            exit.complete(new Exit(code, expected, uptime));
        });
        w.expectExit(); // LSP4IJ's clean-up stop after the death must not make it "expected"
        Exit e = exit.get(10, TimeUnit.SECONDS);
        assertEquals(7, e.code());
        assertFalse(e.expected());
        assertTrue(e.uptime().toNanos() > 0);
        Thread.sleep(100);
        assertEquals(1, calls.get(), "reported once");
    }

    @Test
    void aStopAskedForWhileAliveIsExpected() throws Exception {
        Process p = new ProcessBuilder("sleep", "30").start();
        CompletableFuture<Exit> exit = new CompletableFuture<>();
        ProcessWatch w = ProcessWatch.watch(p, System.nanoTime(), (code, expected, uptime) -> exit.complete(new Exit(code, expected, uptime)));
        w.expectExit();
        p.destroy();
        assertTrue(exit.get(10, TimeUnit.SECONDS).expected());
    }

    @Test
    void aCrashWhileRunningIsUnexpected() throws Exception {
        Process p = new ProcessBuilder("sh", "-c", "sleep 0.3; exit 3").start();
        CompletableFuture<Exit> exit = new CompletableFuture<>();
        ProcessWatch.watch(p, System.nanoTime(), (code, expected, uptime) -> exit.complete(new Exit(code, expected, uptime)));
        Exit e = exit.get(10, TimeUnit.SECONDS);
        assertEquals(3, e.code());
        assertFalse(e.expected());
        assertTrue(e.uptime().toMillis() >= 250, "uptime " + e.uptime());
    }
}
