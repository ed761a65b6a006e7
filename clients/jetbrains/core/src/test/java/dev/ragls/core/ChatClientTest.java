package dev.ragls.core;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.ragls.core.chat.ChatConfig;
import dev.ragls.core.chat.ChatException;
import dev.ragls.core.chat.ChatMessage;
import dev.ragls.core.chat.OpenAiChatClient;
import dev.ragls.core.chat.SseParser;
import dev.ragls.core.lsp.Trees;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The streaming chat client against a local OpenAI-compatible test server on 127.0.0.1. */
class ChatClientTest {
    private HttpServer server;
    private ExecutorService pool;
    private String base;
    private final AtomicReference<Map<String, Object>> lastBody = new AtomicReference<>();
    private final AtomicReference<String> lastAuth = new AtomicReference<>();
    private final AtomicReference<String> lastPath = new AtomicReference<>();

    @FunctionalInterface
    interface Handler {
        void handle(HttpExchange ex) throws Exception;
    }

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "fake-openai");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(pool);
        server.start();
        base = "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
    }

    @AfterEach
    void stop() {
        server.stop(0);
        pool.shutdownNow();
    }

    private void route(Handler h) {
        server.createContext("/", ex -> {
            try {
                lastPath.set(ex.getRequestURI().getPath());
                lastAuth.set(ex.getRequestHeaders().getFirst("Authorization"));
                lastBody.set(Trees.parseObject(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)));
                h.handle(ex);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                // the client side of the test reports what went wrong
            } finally {
                ex.close();
            }
        });
    }

    private static void sse(HttpExchange ex) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
        ex.sendResponseHeaders(200, 0);
    }

    private static void write(HttpExchange ex, String s) throws IOException {
        OutputStream os = ex.getResponseBody();
        os.write(s.getBytes(StandardCharsets.UTF_8));
        os.flush();
    }

    private static String delta(String text) {
        return "data: " + Trees.write(Trees.obj("id", "c1", "object", "chat.completion.chunk",
                "choices", List.of(Trees.obj("index", 0, "delta", Trees.obj("content", text), "finish_reason", null)))) + "\n\n";
    }

    private static void json(HttpExchange ex, int status, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, b.length);
        ex.getResponseBody().write(b);
    }

    private OpenAiChatClient client(String key, Duration request, Duration idle) {
        return new OpenAiChatClient(ChatConfig.of(base, "test-model", key)
                .withTimeouts(Duration.ofSeconds(2), request, idle));
    }

    private static final List<ChatMessage> MESSAGES = List.of(ChatMessage.system("sys"), ChatMessage.user("hi \"there\""));

    @Test
    void streamsChunksAsTheyArrive() throws Exception {
        CountDownLatch firstSeen = new CountDownLatch(1);
        route(ex -> {
            sse(ex);
            write(ex, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n");
            write(ex, ": keep-alive comment\n\n");
            write(ex, delta("Hel"));
            // the rest is only sent once the client has shown the first piece: proves streaming
            if (!firstSeen.await(5, TimeUnit.SECONDS)) {
                return;
            }
            write(ex, delta("lo"));
            write(ex, "data:" + delta(" w\u00f6rld").substring(5));
            write(ex, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n");
            write(ex, "data: [DONE]\n\n");
        });
        List<String> deltas = new CopyOnWriteArrayList<>();
        String answer = client("sk-test", Duration.ofSeconds(5), Duration.ofSeconds(5)).stream(MESSAGES, d -> {
            deltas.add(d);
            firstSeen.countDown();
        });
        assertEquals("Hello w\u00f6rld", answer);
        assertEquals(List.of("Hel", "lo", " w\u00f6rld"), deltas);
        assertEquals("/v1/chat/completions", lastPath.get());
        assertEquals("Bearer sk-test", lastAuth.get());
        Map<String, Object> body = lastBody.get();
        assertEquals("test-model", body.get("model"));
        assertEquals(Boolean.TRUE, body.get("stream"));
        List<Object> msgs = Trees.asList(body.get("messages"));
        assertEquals(Map.of("role", "user", "content", "hi \"there\""), msgs.get(1));
    }

    @Test
    void streamWithoutDoneStillCompletes() throws Exception {
        route(ex -> {
            sse(ex);
            write(ex, delta("a"));
            write(ex, delta("b").trim()); // last event without the blank line
        });
        assertEquals("ab", client("", Duration.ofSeconds(5), Duration.ofSeconds(5)).stream(MESSAGES, d -> { }));
        assertNull(lastAuth.get(), "no Authorization header without a key");
    }

    @Test
    void nonStreamingJsonAnswer() throws Exception {
        route(ex -> json(ex, 200, "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"whole\"}}]}"));
        List<String> deltas = new CopyOnWriteArrayList<>();
        assertEquals("whole", client("", Duration.ofSeconds(5), Duration.ofSeconds(5)).stream(MESSAGES, deltas::add));
        assertEquals(List.of("whole"), deltas);
    }

    @Test
    void errorStatusWithJsonMessage() {
        route(ex -> json(ex, 401, "{\"error\":{\"message\":\"Invalid API key\",\"type\":\"auth\"}}"));
        ChatException e = assertThrows(ChatException.class,
                () -> client("bad", Duration.ofSeconds(5), Duration.ofSeconds(5)).stream(MESSAGES, d -> { }));
        assertEquals(ChatException.Kind.HTTP_STATUS, e.kind());
        assertEquals(401, e.status());
        assertTrue(e.getMessage().contains("HTTP 401"), e.getMessage());
        assertTrue(e.getMessage().contains("Invalid API key"), e.getMessage());
    }

    @Test
    void errorStatusWithPlainText() {
        route(ex -> {
            byte[] b = "model 'nope' not found".getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "text/plain");
            ex.sendResponseHeaders(404, b.length);
            ex.getResponseBody().write(b);
        });
        ChatException e = assertThrows(ChatException.class,
                () -> client("", Duration.ofSeconds(5), Duration.ofSeconds(5)).stream(MESSAGES, d -> { }));
        assertEquals(404, e.status());
        assertTrue(e.getMessage().contains("model 'nope' not found"), e.getMessage());
    }

    @Test
    void errorEventInsideTheStream() {
        route(ex -> {
            sse(ex);
            write(ex, delta("partial"));
            write(ex, "data: {\"error\":{\"message\":\"context length exceeded\"}}\n\n");
        });
        ChatException e = assertThrows(ChatException.class,
                () -> client("", Duration.ofSeconds(5), Duration.ofSeconds(5)).stream(MESSAGES, d -> { }));
        assertEquals(ChatException.Kind.PROTOCOL, e.kind());
        assertTrue(e.getMessage().contains("context length exceeded"), e.getMessage());
    }

    @Test
    void timeoutWhenTheStreamStalls() {
        route(ex -> {
            sse(ex);
            write(ex, delta("first"));
            Thread.sleep(10_000);
        });
        List<String> deltas = new CopyOnWriteArrayList<>();
        long t0 = System.nanoTime();
        ChatException e = assertThrows(ChatException.class,
                () -> client("", Duration.ofSeconds(5), Duration.ofMillis(500)).stream(MESSAGES, deltas::add));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(ChatException.Kind.TIMEOUT, e.kind());
        assertEquals(List.of("first"), deltas);
        assertTrue(ms < 4000, "timed out after " + ms + " ms");
    }

    @Test
    void timeoutWhenNoHeadersArrive() {
        route(ex -> Thread.sleep(10_000));
        long t0 = System.nanoTime();
        ChatException e = assertThrows(ChatException.class,
                () -> client("", Duration.ofMillis(500), Duration.ofSeconds(5)).stream(MESSAGES, d -> { }));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(ChatException.Kind.TIMEOUT, e.kind(), e.getMessage());
        assertTrue(ms < 4000, "timed out after " + ms + " ms");
    }

    @Test
    void connectionRefused() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        OpenAiChatClient c = new OpenAiChatClient(ChatConfig.of("http://127.0.0.1:" + port + "/v1", "m", "")
                .withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(5), Duration.ofSeconds(5)));
        ChatException e = assertThrows(ChatException.class, () -> c.stream(MESSAGES, d -> { }));
        assertTrue(e.kind() == ChatException.Kind.CONNECTION || e.kind() == ChatException.Kind.TIMEOUT, e.kind().toString());
    }

    @Test
    void cancelStopsAStalledStream() throws Exception {
        route(ex -> {
            sse(ex);
            write(ex, delta("x"));
            Thread.sleep(10_000);
        });
        OpenAiChatClient c = client("", Duration.ofSeconds(5), Duration.ofSeconds(30));
        Thread canceller = new Thread(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException ignored) {
                return;
            }
            c.cancel();
        });
        canceller.start();
        ChatException e = assertThrows(ChatException.class, () -> c.stream(MESSAGES, d -> { }));
        assertEquals(ChatException.Kind.CANCELLED, e.kind());
        canceller.join();
    }

    @Test
    void endpointUrls() throws Exception {
        assertEquals("http://h:1/v1/chat/completions", ChatConfig.of("http://h:1/v1/", "m", "").completionsUri().toString());
        assertEquals("http://h:1/v1/chat/completions", ChatConfig.of(" http://h:1/v1 ", "m", "").completionsUri().toString());
        assertEquals("https://h/x/chat/completions", ChatConfig.of("https://h/x/chat/completions", "m", "").completionsUri().toString());
        assertEquals("http://localhost:11434/v1/chat/completions",
                ChatConfig.of(ChatConfig.OLLAMA_BASE_URL, "m", "").completionsUri().toString());
        assertEquals("http://localhost:1234/v1/chat/completions",
                ChatConfig.of(ChatConfig.LM_STUDIO_BASE_URL, "m", "").completionsUri().toString());
        for (String bad : new String[]{"", "  ", "ftp://h/v1", "not a url", "http://"}) {
            ChatException e = assertThrows(ChatException.class, () -> ChatConfig.of(bad, "m", "").completionsUri(), bad);
            assertEquals(ChatException.Kind.CONFIG, e.kind());
        }
    }

    @Test
    void sseParser() {
        SseParser p = new SseParser();
        assertNull(p.feed("event: message"));
        assertNull(p.feed("data: a"));
        assertNull(p.feed("data:b"));
        assertNull(p.feed(": comment"));
        assertEquals("a\nb", p.feed(""));
        assertNull(p.feed(""));
        assertNull(p.feed("data: tail"));
        assertEquals("tail", p.flush());
        assertNull(p.flush());
        assertFalse(p.feed("id: 1") != null);
    }
}
