package dev.ragls.core.server;

import java.time.Duration;

/**
 * Restart policy after a crash: exponential delays (1 s, 2 s, 4 s, ... capped), attempts counted
 * again from zero once a process stayed up for {@code stableAfter}, and a give-up after
 * {@code maxAttempts} crashes in a row.
 */
public final class Backoff {
    private final Duration initial;
    private final Duration max;
    private final double factor;
    private final int maxAttempts;
    private final Duration stableAfter;
    private int attempts;

    public Backoff(Duration initial, Duration max, double factor, int maxAttempts, Duration stableAfter) {
        if (initial.isNegative() || max.compareTo(initial) < 0 || factor < 1.0 || maxAttempts < 1) {
            throw new IllegalArgumentException("bad backoff parameters");
        }
        this.initial = initial;
        this.max = max;
        this.factor = factor;
        this.maxAttempts = maxAttempts;
        this.stableAfter = stableAfter;
    }

    public static Backoff defaults() {
        return new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(60), 2.0, 8, Duration.ofMinutes(2));
    }

    /**
     * Records a crash of a process that had been up for {@code uptime}; returns how long to wait
     * before restarting, or null to give up.
     */
    public synchronized Duration onCrash(Duration uptime) {
        if (uptime != null && uptime.compareTo(stableAfter) >= 0) {
            attempts = 0;
        }
        attempts++;
        if (attempts > maxAttempts) {
            return null;
        }
        double ms = initial.toMillis() * Math.pow(factor, attempts - 1);
        return Duration.ofMillis((long) Math.min(ms, max.toMillis()));
    }

    /** Crashes in a row so far. */
    public synchronized int attempts() {
        return attempts;
    }

    /** Forget past crashes (the user restarted the server by hand). */
    public synchronized void reset() {
        attempts = 0;
    }
}
