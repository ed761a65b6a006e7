package dev.ragls.core.lsp;

import com.google.gson.JsonParseException;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A minimal JSON-RPC 2.0 / LSP client over stdio, with no IDE dependency. The IDE talks to ragls
 * through LSP4IJ (LSP4J); this client is test code: it drives the real server in the core tests.
 * A returned future behaves like LSP4J's: cancelling it sends {@code $/cancelRequest}.
 *
 * <p>Server-to-client requests get sensible answers by default: {@code window/workDoneProgress/create}
 * and {@code client/(un)registerCapability} get {@code null}, {@code workspace/configuration} gets the
 * value of {@link #setConfiguration} for the {@code ragls} section, unknown methods get
 * MethodNotFound. Notifications and requests are handled in order on one dispatcher thread, so a
 * handler may itself call {@link #request}.
 */
public final class LspClient implements AutoCloseable {
    private final InputStream in;
    private final OutputStream out;
    private final Process process;
    private final AtomicLong nextId = new AtomicLong(1);
    private final Map<Long, CompletableFuture<Object>> pending = new ConcurrentHashMap<>();
    private final Map<String, List<Consumer<Map<String, Object>>>> notificationHandlers = new ConcurrentHashMap<>();
    private final Map<String, Function<Object, Object>> requestHandlers = new ConcurrentHashMap<>();
    private final List<BiConsumer<String, Object>> allNotifications = new CopyOnWriteArrayList<>();
    private final ExecutorService dispatcher;
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final Object writeLock = new Object();
    private volatile Object configuration;
    private volatile Consumer<String> trace;

    /** Connects to a server over the given streams (e.g. pipes in a test). */
    public LspClient(InputStream in, OutputStream out) {
        this(in, out, null);
    }

    private LspClient(InputStream in, OutputStream out, Process process) {
        this.in = in;
        this.out = out;
        this.process = process;
        this.dispatcher = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "lsp-dispatch");
            t.setDaemon(true);
            return t;
        });
        installDefaultHandlers();
        Thread reader = new Thread(this::readLoop, "lsp-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts {@code command} in {@code workDir} with extra environment variables, and connects to its
     * stdio. Each stderr line goes to {@code stderr} (may be null to discard).
     */
    public static LspClient start(List<String> command, Path workDir, Map<String, String> env,
                                  Consumer<String> stderr) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command);
        if (workDir != null) {
            pb.directory(workDir.toFile());
        }
        if (env != null) {
            pb.environment().putAll(env);
        }
        Process p = pb.start();
        Thread drain = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (stderr != null) {
                        stderr.accept(line);
                    }
                }
            } catch (IOException ignored) {
                // process gone
            }
        }, "lsp-stderr");
        drain.setDaemon(true);
        drain.start();
        return new LspClient(p.getInputStream(), p.getOutputStream(), p);
    }

    private void installDefaultHandlers() {
        requestHandlers.put("window/workDoneProgress/create", params -> null);
        requestHandlers.put("client/registerCapability", params -> null);
        requestHandlers.put("client/unregisterCapability", params -> null);
        requestHandlers.put("window/showMessageRequest", params -> null);
        requestHandlers.put("workspace/workspaceFolders", params -> null);
        requestHandlers.put("workspace/configuration", params -> {
            List<Object> result = new ArrayList<>();
            for (Object item : Trees.getList(Trees.asObject(params), "items")) {
                String section = Trees.getString(Trees.asObject(item), "section", null);
                result.add(section == null || section.equals("ragls") ? configuration : null);
            }
            return result;
        });
    }

    /** Value answered to {@code workspace/configuration} for the {@code ragls} section. */
    public void setConfiguration(Object value) {
        this.configuration = value;
    }

    /** Receives every message sent and received as {@code "--> json"} / {@code "<-- json"}. */
    public void setTrace(Consumer<String> trace) {
        this.trace = trace;
    }

    public void onNotification(String method, Consumer<Map<String, Object>> handler) {
        notificationHandlers.computeIfAbsent(method, k -> new CopyOnWriteArrayList<>()).add(handler);
    }

    /** Sees every notification (method, params) before the method-specific handlers. */
    public void onAnyNotification(BiConsumer<String, Object> handler) {
        allNotifications.add(handler);
    }

    /** Answers server-to-client requests of {@code method} with the handler's result. */
    public void onRequest(String method, Function<Object, Object> handler) {
        requestHandlers.put(method, handler);
    }

    // ------------------------------------------------------------------ sending

    public CompletableFuture<Object> request(String method, Object params) {
        return request(nextId.getAndIncrement(), method, params);
    }

    private CompletableFuture<Object> request(long id, String method, Object params) {
        // like LSP4J's RemoteEndpoint: cancelling the returned future sends $/cancelRequest
        CompletableFuture<Object> f = new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                boolean cancelled = super.cancel(mayInterruptIfRunning);
                if (cancelled) {
                    LspClient.this.notify("$/cancelRequest", Trees.obj("id", id));
                }
                return cancelled;
            }
        };
        if (closed.isDone()) {
            f.completeExceptionally(new LspException(LspException.CONNECTION_CLOSED, "connection closed", null));
            return f;
        }
        pending.put(id, f);
        Map<String, Object> msg = Trees.obj("jsonrpc", "2.0", "id", id, "method", method);
        if (params != null) {
            msg.put("params", params);
        }
        try {
            send(msg);
        } catch (IOException e) {
            pending.remove(id);
            f.completeExceptionally(new LspException(LspException.CONNECTION_CLOSED, "cannot write to server: " + e.getMessage(), null));
        }
        f.whenComplete((r, e) -> pending.remove(id));
        return f;
    }

    /**
     * Sends a request and waits for its result; on timeout sends {@code $/cancelRequest} and throws
     * {@link LspException} with code {@link LspException#TIMEOUT}.
     */
    public Object requestSync(String method, Object params, Duration timeout) throws LspException, InterruptedException {
        long id = nextId.getAndIncrement();
        CompletableFuture<Object> f = request(id, method, params);
        try {
            return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(false);
            throw new LspException(LspException.TIMEOUT, method + ": no answer within " + timeout.toMillis() + " ms", null);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof LspException) {
                throw (LspException) c;
            }
            throw new LspException(LspException.INTERNAL_ERROR, String.valueOf(c), null);
        }
    }

    public void notify(String method, Object params) {
        Map<String, Object> msg = Trees.obj("jsonrpc", "2.0", "method", method);
        if (params != null) {
            msg.put("params", params);
        }
        try {
            send(msg);
        } catch (IOException ignored) {
            // the reader notices the closed connection
        }
    }

    private void send(Map<String, Object> msg) throws IOException {
        String json = Trees.write(msg);
        Consumer<String> t = trace;
        if (t != null) {
            t.accept("--> " + json);
        }
        synchronized (writeLock) {
            LspFraming.write(out, json);
        }
    }

    // ------------------------------------------------------------------ lifecycle helpers

    /** Client capabilities that matter to ragls: work-done progress and pull configuration. */
    public static Map<String, Object> defaultCapabilities() {
        return Trees.obj(
                "window", Trees.obj("workDoneProgress", true),
                "workspace", Trees.obj("configuration", true, "didChangeConfiguration", Trees.obj("dynamicRegistration", false)));
    }

    /** Sends {@code initialize} for {@code root}, then {@code initialized}; returns the InitializeResult. */
    public Map<String, Object> initialize(Path root, Object initializationOptions, Duration timeout)
            throws LspException, InterruptedException {
        return initialize(List.of(root), initializationOptions, timeout);
    }

    /**
     * {@code initialize} with these workspace folders, as LSP4IJ sends a project's base directories:
     * each named by its directory name, {@code rootUri} only when there is one.
     */
    public Map<String, Object> initialize(List<Path> roots, Object initializationOptions, Duration timeout)
            throws LspException, InterruptedException {
        List<Object> folders = new ArrayList<>();
        for (Path r : roots) {
            folders.add(Trees.obj("uri", r.toUri().toString(), "name", r.getFileName() == null ? "root" : r.getFileName().toString()));
        }
        Path root = roots.get(0);
        Map<String, Object> params = Trees.obj(
                "processId", ProcessHandle.current().pid(),
                "clientInfo", Trees.obj("name", "ragls-jetbrains-core", "version", "0.1.0"),
                "rootUri", roots.size() == 1 ? root.toUri().toString() : null,
                "rootPath", roots.size() == 1 ? root.toString() : null,
                "workspaceFolders", folders,
                "capabilities", defaultCapabilities());
        if (initializationOptions != null) {
            params.put("initializationOptions", initializationOptions);
        }
        Object result = requestSync("initialize", params, timeout);
        notify("initialized", Trees.obj());
        return Trees.asObject(result);
    }

    /** {@code shutdown} + {@code exit}, then waits for the process (killing it after the timeout). */
    public void shutdown(Duration timeout) {
        try {
            if (!closed.isDone()) {
                requestSync("shutdown", null, timeout);
                notify("exit", null);
            }
        } catch (LspException | RuntimeException e) {
            // fall through to the process handling
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (process != null) {
            try {
                if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroy();
                    if (!process.waitFor(2, TimeUnit.SECONDS)) {
                        process.destroyForcibly().waitFor(2, TimeUnit.SECONDS);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
        close();
    }

    @Override
    public void close() {
        try {
            out.close();
        } catch (IOException ignored) {
            // already closed
        }
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
        }
        dispatcher.shutdown();
    }

    public boolean isAlive() {
        return !closed.isDone() && (process == null || process.isAlive());
    }

    /** Completes when the server's output stream ends. */
    public CompletableFuture<Void> closedFuture() {
        return closed;
    }

    public Process process() {
        return process;
    }

    // ------------------------------------------------------------------ receiving

    private void readLoop() {
        String why = "server closed the connection";
        try {
            while (true) {
                String body = LspFraming.read(in);
                if (body == null) {
                    break;
                }
                Consumer<String> t = trace;
                if (t != null) {
                    t.accept("<-- " + body);
                }
                Map<String, Object> msg;
                try {
                    msg = Trees.parseObject(body);
                } catch (JsonParseException e) {
                    continue; // ignore garbage, keep reading
                }
                route(msg);
            }
        } catch (IOException e) {
            why = "connection error: " + e.getMessage();
        } finally {
            LspException ex = new LspException(LspException.CONNECTION_CLOSED, why, null);
            for (CompletableFuture<Object> f : pending.values()) {
                f.completeExceptionally(ex);
            }
            pending.clear();
            closed.complete(null);
        }
    }

    private void route(Map<String, Object> msg) {
        Object method = msg.get("method");
        Object id = msg.get("id");
        if (method == null) {
            if (id instanceof Number) {
                CompletableFuture<Object> f = pending.remove(((Number) id).longValue());
                if (f != null) {
                    if (msg.containsKey("error") && msg.get("error") != null) {
                        Map<String, Object> err = Trees.asObject(msg.get("error"));
                        f.completeExceptionally(new LspException(Trees.getInt(err, "code", LspException.INTERNAL_ERROR),
                                Trees.getString(err, "message", "error"), err.get("data")));
                    } else {
                        f.complete(msg.get("result"));
                    }
                }
            }
            return;
        }
        String m = method.toString();
        Object params = msg.get("params");
        if (msg.containsKey("id")) {
            dispatcher.execute(() -> answer(id, m, params));
        } else {
            dispatcher.execute(() -> {
                for (BiConsumer<String, Object> h : allNotifications) {
                    safely(() -> h.accept(m, params));
                }
                for (Consumer<Map<String, Object>> h : notificationHandlers.getOrDefault(m, List.of())) {
                    safely(() -> h.accept(Trees.asObject(params)));
                }
            });
        }
    }

    private void answer(Object id, String method, Object params) {
        Function<Object, Object> h = requestHandlers.get(method);
        Map<String, Object> reply = Trees.obj("jsonrpc", "2.0", "id", id);
        if (h == null) {
            reply.put("error", Trees.obj("code", LspException.METHOD_NOT_FOUND, "message", "Unhandled method " + method));
        } else {
            try {
                reply.put("result", h.apply(params));
            } catch (RuntimeException e) {
                reply.put("error", Trees.obj("code", LspException.INTERNAL_ERROR, "message", String.valueOf(e.getMessage())));
            }
        }
        try {
            send(reply);
        } catch (IOException ignored) {
            // connection gone
        }
    }

    private static void safely(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException ignored) {
            // a failing handler must not stop message dispatch
        }
    }
}
