package dev.ragls.core;

import dev.ragls.core.lsp.LspClient;
import dev.ragls.core.lsp.LspException;
import dev.ragls.core.lsp.LspFraming;
import dev.ragls.core.lsp.Trees;
import dev.ragls.core.server.RequestAwait;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LspClientTest {
    @Test
    void framingRoundTripWithMultibyteText() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        LspFraming.write(out, "{\"a\":\"\u00e9\u20ac\ud83d\ude00\"}");
        LspFraming.write(out, "{}");
        String wire = out.toString(StandardCharsets.UTF_8);
        assertTrue(wire.startsWith("Content-Length: 17\r\n\r\n"), wire);
        InputStream in = new ByteArrayInputStream(out.toByteArray());
        assertEquals("{\"a\":\"\u00e9\u20ac\ud83d\ude00\"}", LspFraming.read(in));
        assertEquals("{}", LspFraming.read(in));
        assertNull(LspFraming.read(in), "clean end of stream");
    }

    @Test
    void framingAcceptsExtraHeadersAndLfOnly() throws IOException {
        String wire = "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: 2\r\n\r\n{}"
                + "Content-Length: 4\n\n[1] ";
        InputStream in = new ByteArrayInputStream(wire.getBytes(StandardCharsets.US_ASCII));
        assertEquals("{}", LspFraming.read(in));
        assertEquals("[1] ", LspFraming.read(in));
    }

    @Test
    void framingRejectsBrokenInput() {
        assertThrows(IOException.class, () -> LspFraming.read(stream("X-Foo: 1\r\n\r\n{}")));
        assertThrows(IOException.class, () -> LspFraming.read(stream("Content-Length: abc\r\n\r\n")));
        assertThrows(IOException.class, () -> LspFraming.read(stream("garbage\r\n\r\n")));
        assertThrows(EOFException.class, () -> LspFraming.read(stream("Content-Length: 10\r\n\r\n{}")));
        assertThrows(EOFException.class, () -> LspFraming.read(stream("Content-Length: 10\r\n")));
        assertThrows(IOException.class, () -> LspFraming.read(stream("Content-Length: 999999999999\r\n\r\n")));
    }

    private static InputStream stream(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.US_ASCII));
    }

    // ---------------------------------------------------------------- client over pipes

    private PipedInputStream serverIn;
    private PipedOutputStream serverOut;
    private LspClient client;
    private final BlockingQueue<Map<String, Object>> fromClient = new LinkedBlockingQueue<>();
    private Thread serverReader;

    @BeforeEach
    void connect() throws IOException {
        PipedOutputStream clientOut = new PipedOutputStream();
        serverIn = new PipedInputStream(clientOut, 1 << 16);
        serverOut = new PipedOutputStream();
        PipedInputStream clientIn = new PipedInputStream(serverOut, 1 << 16);
        client = new LspClient(clientIn, clientOut);
        serverReader = new Thread(() -> {
            try {
                String body;
                while ((body = LspFraming.read(serverIn)) != null) {
                    fromClient.add(Trees.parseObject(body));
                }
            } catch (IOException ignored) {
                // closed
            }
        });
        serverReader.setDaemon(true);
        serverReader.start();
    }

    @AfterEach
    void disconnect() throws IOException {
        client.close();
        serverOut.close();
    }

    private void serverSends(Object msg) throws IOException {
        LspFraming.write(serverOut, Trees.write(msg));
    }

    private Map<String, Object> nextFromClient() throws InterruptedException {
        Map<String, Object> m = fromClient.poll(5, TimeUnit.SECONDS);
        if (m == null) {
            throw new AssertionError("client sent nothing");
        }
        return m;
    }

    @Test
    void requestsGetTheirOwnResponses() throws Exception {
        CompletableFuture<Object> a = client.request("rag/indexStatus", Trees.obj());
        CompletableFuture<Object> b = client.request("rag/retrieve", Trees.obj("query", "x"));
        Map<String, Object> ra = nextFromClient();
        Map<String, Object> rb = nextFromClient();
        assertEquals("2.0", ra.get("jsonrpc"));
        assertEquals("rag/indexStatus", ra.get("method"));
        assertEquals(Map.of("query", "x"), rb.get("params"));
        // answer out of order
        serverSends(Trees.obj("jsonrpc", "2.0", "id", rb.get("id"), "result", Trees.obj("context", "")));
        serverSends(Trees.obj("jsonrpc", "2.0", "id", ra.get("id"), "error",
                Trees.obj("code", -32602, "message", "topK: Input should be less than or equal to 100")));
        assertEquals(Map.of("context", ""), b.get(5, TimeUnit.SECONDS));
        ExecutionException e = assertThrows(ExecutionException.class, () -> a.get(5, TimeUnit.SECONDS));
        LspException le = assertInstanceOf(LspException.class, e.getCause());
        assertEquals(LspException.INVALID_PARAMS, le.code());
        assertTrue(le.getMessage().startsWith("topK"));
    }

    @Test
    void answersServerRequestsAndDispatchesNotifications() throws Exception {
        BlockingQueue<Map<String, Object>> progress = new LinkedBlockingQueue<>();
        BlockingQueue<String> any = new LinkedBlockingQueue<>();
        client.onNotification("$/progress", progress::add);
        client.onAnyNotification((m, p) -> any.add(m));
        client.setConfiguration(Trees.obj("retrieval", Trees.obj("topK", 7)));

        serverSends(Trees.obj("jsonrpc", "2.0", "id", 1, "method", "window/workDoneProgress/create", "params", Trees.obj("token", "t")));
        Map<String, Object> created = nextFromClient();
        assertEquals(1L, created.get("id"));
        assertTrue(created.containsKey("result"));
        assertNull(created.get("result"));

        serverSends(Trees.obj("jsonrpc", "2.0", "id", "c2", "method", "workspace/configuration",
                "params", Trees.obj("items", List.of(Trees.obj("section", "ragls"), Trees.obj("section", "other")))));
        Map<String, Object> conf = nextFromClient();
        assertEquals("c2", conf.get("id"));
        List<Object> result = Trees.asList(conf.get("result"));
        assertEquals(2, result.size());
        assertEquals(Map.of("retrieval", Map.of("topK", 7L)), result.get(0));
        assertNull(result.get(1));

        serverSends(Trees.obj("jsonrpc", "2.0", "id", 3, "method", "custom/unknown"));
        Map<String, Object> unknown = nextFromClient();
        assertEquals((long) LspException.METHOD_NOT_FOUND, Trees.getObject(unknown, "error").get("code"));

        serverSends(Trees.obj("jsonrpc", "2.0", "method", "$/progress",
                "params", Trees.obj("token", "t", "value", Trees.obj("kind", "begin", "title", "ragls: indexing"))));
        serverSends(Trees.obj("jsonrpc", "2.0", "method", "rag/statusChanged", "params", Trees.obj("state", "ready")));
        Map<String, Object> p = progress.poll(5, TimeUnit.SECONDS);
        assertEquals("t", p.get("token"));
        assertEquals("$/progress", any.poll(5, TimeUnit.SECONDS));
        assertEquals("rag/statusChanged", any.poll(5, TimeUnit.SECONDS));
    }

    @Test
    void handlersMayCallBackIntoTheServer() throws Exception {
        CompletableFuture<Object> nested = new CompletableFuture<>();
        client.onNotification("rag/statusChanged", params -> client.request("rag/indexStatus", null)
                .whenComplete((r, e) -> nested.complete(r)));
        serverSends(Trees.obj("jsonrpc", "2.0", "method", "rag/statusChanged", "params", Trees.obj()));
        Map<String, Object> req = nextFromClient();
        assertEquals("rag/indexStatus", req.get("method"));
        assertFalse(req.containsKey("params"));
        serverSends(Trees.obj("jsonrpc", "2.0", "id", req.get("id"), "result", Trees.obj("state", "ready")));
        assertEquals(Map.of("state", "ready"), nested.get(5, TimeUnit.SECONDS));
    }

    @Test
    void timeoutSendsCancel() throws Exception {
        LspException e = assertThrows(LspException.class,
                () -> client.requestSync("rag/retrieve", Trees.obj("query", "q"), Duration.ofMillis(200)));
        assertEquals(LspException.TIMEOUT, e.code());
        Map<String, Object> req = nextFromClient();
        Map<String, Object> cancel = nextFromClient();
        assertEquals("$/cancelRequest", cancel.get("method"));
        assertEquals(req.get("id"), Trees.getObject(cancel, "params").get("id"));
    }

    /** Issue 18: the plugin's retrieve wait (RequestAwait) cancels the request future on timeout: $/cancelRequest goes out. */
    @Test
    void requestAwaitTimeoutSendsCancelRequest() throws Exception {
        CompletableFuture<Object> f = client.request("rag/retrieve", Trees.obj("query", "q"));
        assertThrows(TimeoutException.class, () -> RequestAwait.await(f, Duration.ofMillis(200), () -> false, "rag/retrieve"));
        Map<String, Object> req = nextFromClient();
        Map<String, Object> cancel = nextFromClient();
        assertEquals("$/cancelRequest", cancel.get("method"));
        assertEquals(req.get("id"), Trees.getObject(cancel, "params").get("id"));
    }

    @Test
    void requestAwaitUserCancelSendsCancelRequest() throws Exception {
        CompletableFuture<Object> f = client.request("rag/retrieve", Trees.obj("query", "q"));
        long t0 = System.nanoTime();
        AtomicBoolean stop = new AtomicBoolean();
        new Thread(() -> {
            sleep(150);
            stop.set(true);
        }).start();
        assertThrows(CancellationException.class, () -> RequestAwait.await(f, Duration.ofSeconds(30), stop::get, "rag/retrieve"));
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "cancel is noticed promptly");
        Map<String, Object> req = nextFromClient();
        Map<String, Object> cancel = nextFromClient();
        assertEquals("$/cancelRequest", cancel.get("method"));
        assertEquals(req.get("id"), Trees.getObject(cancel, "params").get("id"));
    }

    @Test
    void requestAwaitReturnsTheAnswerAndSendsNoCancel() throws Exception {
        CompletableFuture<Object> f = client.request("rag/indexStatus", Trees.obj());
        Map<String, Object> req = nextFromClient();
        serverSends(Trees.obj("jsonrpc", "2.0", "id", req.get("id"), "result", Trees.obj("state", "ready")));
        assertEquals(Map.of("state", "ready"), RequestAwait.await(f, Duration.ofSeconds(10), () -> false, "rag/indexStatus"));
        assertNull(fromClient.poll(300, TimeUnit.MILLISECONDS), "nothing else was sent");
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void pendingRequestsFailWhenTheServerGoesAway() throws Exception {
        CompletableFuture<Object> f = client.request("rag/indexStatus", Trees.obj());
        nextFromClient();
        serverOut.close();
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        assertEquals(LspException.CONNECTION_CLOSED, ((LspException) e.getCause()).code());
        client.closedFuture().get(5, TimeUnit.SECONDS);
        assertFalse(client.isAlive());
        CompletableFuture<Object> after = client.request("rag/indexStatus", Trees.obj());
        assertTrue(after.isCompletedExceptionally());
    }
}
