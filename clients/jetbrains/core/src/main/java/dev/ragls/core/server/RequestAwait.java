package dev.ragls.core.server;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * Waits for a request future and, when the wait ends without an answer (timeout, the caller's
 * cancel signal, interruption), cancels that very future. Given the future LSP4J returned for the
 * request (not one derived from it with {@code thenApply}), that cancel sends {@code $/cancelRequest},
 * so the server stops working on an answer nobody will read.
 */
public final class RequestAwait {
    private static final long POLL_MS = 100;

    private RequestAwait() {
    }

    /**
     * @param request   the future of the request as sent
     * @param timeout   how long to wait
     * @param cancelled polled while waiting; true means the user gave up
     * @param what      names the request in messages
     */
    public static <T> T await(CompletableFuture<T> request, Duration timeout, BooleanSupplier cancelled, String what)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (true) {
                if (cancelled != null && cancelled.getAsBoolean()) {
                    request.cancel(true);
                    throw new CancellationException(what + " cancelled");
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    request.cancel(true);
                    throw new TimeoutException(what + " took longer than " + timeout.toSeconds() + " s");
                }
                try {
                    return request.get(Math.min(TimeUnit.NANOSECONDS.toMillis(left) + 1, POLL_MS), TimeUnit.MILLISECONDS);
                } catch (TimeoutException ignored) {
                    // poll again
                }
            }
        } catch (InterruptedException e) {
            request.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
                c = c.getCause();
            }
            if (c instanceof Exception ex) {
                throw ex;
            }
            throw new Exception(String.valueOf(c), c);
        }
    }
}
