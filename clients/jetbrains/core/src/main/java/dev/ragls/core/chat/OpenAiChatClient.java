package dev.ragls.core.chat;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import dev.ragls.core.protocol.Wire;

import java.net.ConnectException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * Streaming client for OpenAI-compatible {@code POST /chat/completions} (OpenAI, Ollama, LM Studio,
 * vLLM, llama.cpp server, ...), built on {@code java.net.http}. Answers are read as server-sent
 * events ({@code data: {...}} lines, ended by {@code data: [DONE]}); a server that ignores
 * {@code stream: true} and answers with one JSON body works too.
 */
public final class OpenAiChatClient implements ChatTransport {
    private static final long POLL_MS = 50;

    private final ChatConfig config;
    private final HttpClient http;
    private final AtomicBoolean cancelled = new AtomicBoolean();
    private final AtomicReference<Runnable> onCancel = new AtomicReference<>();

    public OpenAiChatClient(ChatConfig config) {
        this(config, HttpClient.newBuilder()
                .connectTimeout(config.connectTimeout())
                .followRedirects(HttpClient.Redirect.NORMAL)
                .version(HttpClient.Version.HTTP_1_1)
                .build());
    }

    public OpenAiChatClient(ChatConfig config, HttpClient http) {
        this.config = config;
        this.http = http;
    }

    /** Aborts the running {@link #stream} call, which then throws {@link ChatException.Kind#CANCELLED}. */
    public void cancel() {
        cancelled.set(true);
        Runnable r = onCancel.get();
        if (r != null) {
            r.run();
        }
    }

    /** The JSON body sent for {@code messages}. */
    public String requestBody(List<ChatMessage> messages) {
        JsonObject body = new JsonObject();
        body.addProperty("model", config.model());
        body.add("messages", Wire.GSON.toJsonTree(messages));
        body.addProperty("stream", true);
        return Wire.GSON.toJson(body);
    }

    /**
     * Sends {@code messages} and blocks until the answer is complete, calling {@code onDelta} with
     * each piece of text as it arrives (on an HTTP client thread). Returns the whole answer.
     */
    @Override
    public String stream(List<ChatMessage> messages, Consumer<String> onDelta) throws ChatException {
        cancelled.set(false);
        HttpRequest.Builder rb = HttpRequest.newBuilder(config.completionsUri())
                .timeout(config.requestTimeout())
                .header("Content-Type", "application/json")
                .header("Accept", "text/event-stream, application/json")
                .POST(HttpRequest.BodyPublishers.ofString(requestBody(messages), StandardCharsets.UTF_8));
        if (config.apiKey() != null && !config.apiKey().isBlank()) {
            rb.header("Authorization", "Bearer " + config.apiKey().strip());
        }

        StreamState st = new StreamState(onDelta);
        HttpResponse.BodyHandler<String> handler = info -> {
            st.status = info.statusCode();
            st.touch();
            String type = info.headers().firstValue("Content-Type").orElse("").toLowerCase();
            if (info.statusCode() / 100 != 2 || type.startsWith("application/json")) {
                st.whole = true;
                return HttpResponse.BodySubscribers.ofString(StandardCharsets.UTF_8);
            }
            return HttpResponse.BodySubscribers.fromLineSubscriber(st, s -> "", StandardCharsets.UTF_8, null);
        };

        CompletableFuture<HttpResponse<String>> response = http.sendAsync(rb.build(), handler);
        response.whenComplete((resp, err) -> {
            if (err != null) {
                st.outcome.completeExceptionally(err);
            } else if (st.whole) {
                try {
                    st.outcome.complete(wholeBody(resp.statusCode(), resp.body(), st));
                } catch (ChatException e) {
                    st.outcome.completeExceptionally(e);
                }
            } else {
                st.finish();
            }
        });
        onCancel.set(() -> {
            st.outcome.completeExceptionally(new ChatException(ChatException.Kind.CANCELLED, "Cancelled."));
            st.cancelSubscription();
            response.cancel(true);
        });
        if (cancelled.get()) {
            onCancel.get().run();
        }
        try {
            while (true) {
                try {
                    return st.outcome.get(POLL_MS, TimeUnit.MILLISECONDS);
                } catch (TimeoutException notYet) {
                    if (st.status > 0 && !st.whole && config.idleTimeout() != null
                            && System.nanoTime() - st.lastActivity.get() > config.idleTimeout().toNanos()) {
                        st.cancelSubscription();
                        response.cancel(true);
                        throw new ChatException(ChatException.Kind.TIMEOUT, 0,
                                "The chat server sent nothing for " + config.idleTimeout().toSeconds() + " s.", null);
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            st.cancelSubscription();
            response.cancel(true);
            throw new ChatException(ChatException.Kind.CANCELLED, 0, "Interrupted.", e);
        } catch (ExecutionException e) {
            throw translate(e.getCause());
        } catch (CancellationException e) {
            throw translate(e);
        } finally {
            onCancel.set(null);
        }
    }

    private ChatException translate(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof ChatException) {
            return (ChatException) t;
        }
        if (t instanceof CancellationException || cancelled.get()) {
            return new ChatException(ChatException.Kind.CANCELLED, 0, "Cancelled.", t);
        }
        if (t instanceof HttpConnectTimeoutException) {
            return new ChatException(ChatException.Kind.TIMEOUT, 0,
                    "Could not connect to " + config.baseUrl() + " in " + config.connectTimeout().toSeconds() + " s.", t);
        }
        if (t instanceof HttpTimeoutException) {
            return new ChatException(ChatException.Kind.TIMEOUT, 0,
                    "The chat server did not answer within " + config.requestTimeout().toSeconds() + " s.", t);
        }
        if (t instanceof ConnectException) {
            return new ChatException(ChatException.Kind.CONNECTION, 0,
                    "Cannot connect to " + config.baseUrl() + " (is the server running?)", t);
        }
        return new ChatException(ChatException.Kind.CONNECTION, 0,
                "Chat request failed: " + (t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage()), t);
    }

    private static String wholeBody(int status, String body, StreamState st) throws ChatException {
        if (status / 100 != 2) {
            throw new ChatException(ChatException.Kind.HTTP_STATUS, status,
                    "Chat server answered HTTP " + status + ": " + errorMessage(body), null);
        }
        JsonObject m;
        try {
            m = parseObject(body);
        } catch (JsonParseException e) {
            throw new ChatException(ChatException.Kind.PROTOCOL, status, "Unreadable chat answer: " + e.getMessage(), e);
        }
        if (m.has("error")) {
            throw new ChatException(ChatException.Kind.PROTOCOL, status, "Chat server error: " + errorMessage(body), null);
        }
        JsonObject choice = null;
        for (JsonElement c : array(m, "choices")) {
            choice = c.isJsonObject() ? c.getAsJsonObject() : null;
            break;
        }
        String text = string(object(choice, "message"), "content");
        text = text == null ? "" : text;
        st.deliver(text);
        return text;
    }

    /** The human part of an error body: {@code error.message}, {@code error}, {@code message} or the text. */
    static String errorMessage(String body) {
        if (body == null || body.isBlank()) {
            return "(empty body)";
        }
        try {
            JsonObject m = parseObject(body);
            JsonElement err = m.get("error");
            if (err != null && err.isJsonObject()) {
                String msg = string(err.getAsJsonObject(), "message");
                if (msg != null) {
                    return msg;
                }
            } else if (err != null && err.isJsonPrimitive() && err.getAsJsonPrimitive().isString()) {
                return err.getAsString();
            }
            String msg = string(m, "message");
            if (msg != null) {
                return msg;
            }
        } catch (JsonParseException notJson) {
            // fall through to the raw text
        }
        String t = body.strip();
        return t.length() > 300 ? t.substring(0, 300) + "\u2026" : t;
    }

    /** {@code text} as a JSON object; anything else is a {@link JsonParseException}. */
    static JsonObject parseObject(String text) {
        JsonElement e = JsonParser.parseString(text);
        if (!e.isJsonObject()) {
            throw new JsonParseException("not a JSON object");
        }
        return e.getAsJsonObject();
    }

    private static JsonObject object(JsonObject o, String key) {
        JsonElement e = o == null ? null : o.get(key);
        return e != null && e.isJsonObject() ? e.getAsJsonObject() : null;
    }

    private static Iterable<JsonElement> array(JsonObject o, String key) {
        JsonElement e = o.get(key);
        return e != null && e.isJsonArray() ? e.getAsJsonArray() : List.of();
    }

    /** The string at {@code key}, or null (absent, null or not a string). */
    private static String string(JsonObject o, String key) {
        JsonElement e = o == null ? null : o.get(key);
        if (e == null || !e.isJsonPrimitive()) {
            return null;
        }
        JsonPrimitive p = e.getAsJsonPrimitive();
        return p.isString() ? p.getAsString() : null;
    }

    /** Receives the streamed body line by line. */
    private static final class StreamState implements Flow.Subscriber<String> {
        final CompletableFuture<String> outcome = new CompletableFuture<>();
        final AtomicLong lastActivity = new AtomicLong(System.nanoTime());
        final SseParser sse = new SseParser();
        final StringBuilder answer = new StringBuilder();
        final Consumer<String> onDelta;
        volatile int status;
        volatile boolean whole;
        volatile Flow.Subscription subscription;

        StreamState(Consumer<String> onDelta) {
            this.onDelta = onDelta;
        }

        void touch() {
            lastActivity.set(System.nanoTime());
        }

        void cancelSubscription() {
            Flow.Subscription s = subscription;
            if (s != null) {
                s.cancel();
            }
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(String line) {
            touch();
            if (outcome.isDone()) {
                return;
            }
            String data = sse.feed(line);
            if (data != null) {
                event(data);
            }
        }

        private void event(String data) {
            String d = data.strip();
            if (d.equals("[DONE]")) {
                finish();
                cancelSubscription();
                return;
            }
            JsonObject m;
            try {
                m = parseObject(d);
            } catch (JsonParseException e) {
                outcome.completeExceptionally(new ChatException(ChatException.Kind.PROTOCOL, status,
                        "Unreadable stream chunk: " + e.getMessage(), e));
                cancelSubscription();
                return;
            }
            if (m.has("error")) {
                outcome.completeExceptionally(new ChatException(ChatException.Kind.PROTOCOL, status,
                        "Chat server error: " + errorMessage(d), null));
                cancelSubscription();
                return;
            }
            for (JsonElement c : array(m, "choices")) {
                String content = string(object(c.isJsonObject() ? c.getAsJsonObject() : null, "delta"), "content");
                if (content != null && !content.isEmpty()) {
                    deliver(content);
                }
            }
        }

        synchronized void deliver(String text) {
            if (text.isEmpty()) {
                return;
            }
            answer.append(text);
            if (onDelta != null) {
                try {
                    onDelta.accept(text);
                } catch (RuntimeException listenerBug) {
                    // a failing UI callback must not break the stream
                }
            }
        }

        synchronized void finish() {
            if (!outcome.isDone()) {
                String rest = sse.flush();
                if (rest != null && !rest.strip().equals("[DONE]")) {
                    event(rest);
                }
                outcome.complete(answer.toString());
            }
        }

        @Override
        public void onError(Throwable t) {
            outcome.completeExceptionally(t);
        }

        @Override
        public void onComplete() {
            finish();
        }
    }
}
