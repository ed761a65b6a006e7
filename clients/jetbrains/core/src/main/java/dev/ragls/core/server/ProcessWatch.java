package dev.ragls.core.server;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Reports the exit of a server process exactly once, with whether it was asked for. Built on
 * {@link Process#onExit()}, which completes even when the process had already died before the watch
 * was set up: a server that crashes during start-up is still seen as a crash (an IDE process listener
 * added after {@code startNotify()} would miss that exit).
 */
public final class ProcessWatch {
    /** Called once, on a JDK thread, when the process has exited. */
    @FunctionalInterface
    public interface ExitListener {
        void onExit(int exitCode, boolean expected, Duration uptime);
    }

    private final Process process;
    private final AtomicBoolean stopRequested = new AtomicBoolean();

    private ProcessWatch(Process process) {
        this.process = process;
    }

    /** Watches {@code process}, started at {@code startedAtNanos} ({@link System#nanoTime()}). */
    public static ProcessWatch watch(Process process, long startedAtNanos, ExitListener listener) {
        ProcessWatch w = new ProcessWatch(process);
        AtomicBoolean reported = new AtomicBoolean();
        process.onExit().thenAccept(p -> {
            if (reported.compareAndSet(false, true)) {
                listener.onExit(p.exitValue(), w.stopRequested.get(), Duration.ofNanos(System.nanoTime() - startedAtNanos));
            }
        });
        return w;
    }

    /**
     * Marks the coming exit as asked for. Only a live process counts: a stop that merely cleans up
     * after a process that already died must not turn its crash into an expected exit.
     */
    public void expectExit() {
        if (process.isAlive()) {
            stopRequested.set(true);
        }
    }
}
