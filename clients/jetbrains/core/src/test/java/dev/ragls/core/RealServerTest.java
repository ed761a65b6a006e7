package dev.ragls.core;

import com.sun.net.httpserver.HttpServer;
import dev.ragls.core.chat.ChatConfig;
import dev.ragls.core.chat.OpenAiChatClient;
import dev.ragls.core.chat.RagChat;
import dev.ragls.core.lsp.LspClient;
import dev.ragls.core.lsp.LspException;
import dev.ragls.core.lsp.RaglsSession;
import dev.ragls.core.lsp.Trees;
import dev.ragls.core.protocol.Chunk;
import dev.ragls.core.protocol.FeedbackParams;
import dev.ragls.core.protocol.FeedbackResult;
import dev.ragls.core.protocol.IndexStatus;
import dev.ragls.core.protocol.ProgressEvent;
import dev.ragls.core.protocol.RetrieveParams;
import dev.ragls.core.protocol.RetrieveResult;
import dev.ragls.core.server.ClientSettings;
import dev.ragls.core.status.ServerState;
import dev.ragls.core.status.StatusModel;
import dev.ragls.core.status.StatusText;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Drives the real ragls server over stdio with the core's LSP client, on a copy of
 * tests/fixtures/polyglot. Needs {@code RAGLS_SERVER} (absolute path to ragls) and
 * {@code RAGLS_FIXTURE} (the fixture folder); skipped without them unless {@code CI=true}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RealServerTest {
    static final String QUERY = "calculate the invoice total including tax";
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);
    static final Duration READY_TIMEOUT = Duration.ofSeconds(Long.getLong("ragls.readyTimeoutSeconds", 120));

    private Path tmp;
    private Path workspace;
    private LspClient client;
    private RaglsSession session;
    private Map<String, Object> initResult;
    private final List<String> stderr = new CopyOnWriteArrayList<>();
    private final List<ProgressEvent> progress = new CopyOnWriteArrayList<>();
    private final List<IndexStatus> statusChanged = new CopyOnWriteArrayList<>();
    private final List<Object> progressCreates = new CopyOnWriteArrayList<>();
    private final StatusModel model = new StatusModel();
    private final List<String> texts = Collections.synchronizedList(new ArrayList<>());
    private IndexStatus ready;

    @BeforeAll
    void startServer() throws Exception {
        String server = System.getenv("RAGLS_SERVER");
        String fixture = System.getenv("RAGLS_FIXTURE");
        boolean ci = "true".equalsIgnoreCase(System.getenv("CI"));
        boolean usable = server != null && !server.isBlank() && Files.isExecutable(Path.of(server))
                && fixture != null && Files.isDirectory(Path.of(fixture));
        if (!usable) {
            String why = "real-server tests need RAGLS_SERVER (executable, got " + server + ") and RAGLS_FIXTURE (got " + fixture + ")";
            if (ci) {
                fail(why);
            }
            Assumptions.abort(why);
        }
        tmp = Files.createTempDirectory("ragls-jb-test");
        workspace = tmp.resolve("polyglot");
        copyTree(Path.of(fixture), workspace);
        Path cache = Files.createDirectories(tmp.resolve("cache"));

        model.addListener(() -> {
            String t = model.text();
            synchronized (texts) {
                if (texts.isEmpty() || !texts.get(texts.size() - 1).equals(t)) {
                    texts.add(t);
                }
            }
        });
        model.setServerState(ServerState.STARTING, null);

        client = LspClient.start(List.of(server), workspace,
                Map.of("XDG_CACHE_HOME", cache.toString(), "RAGLS_CACHE_DIR", cache.resolve("ragls").toString(),
                        "XDG_STATE_HOME", tmp.resolve("state").toString()),
                stderr::add);
        client.onRequest("window/workDoneProgress/create", params -> {
            progressCreates.add(params);
            return null;
        });
        client.onNotification("$/progress", p -> {
            ProgressEvent e = ProgressEvent.fromJson(Trees.tree(p));
            progress.add(e);
            model.onProgress(e);
        });
        client.onNotification(RaglsSession.STATUS_CHANGED, p -> {
            IndexStatus s = IndexStatus.fromJson(Trees.tree(p));
            statusChanged.add(s);
            model.onStatus(s);
        });
        ClientSettings settings = ClientSettings.defaults();
        client.setConfiguration(settings.toServerSettings());
        session = new RaglsSession(client, REQUEST_TIMEOUT);
        long t0 = System.nanoTime();
        initResult = client.initialize(workspace, settings.toServerSettings(), REQUEST_TIMEOUT);
        model.setServerState(ServerState.RUNNING, null);
        System.out.printf("[real-server] initialize answered in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
    }

    @AfterAll
    void stopServer() throws IOException {
        if (client != null) {
            long t0 = System.nanoTime();
            client.shutdown(Duration.ofSeconds(15));
            System.out.printf("[real-server] shutdown took %d ms; process alive after: %s%n",
                    (System.nanoTime() - t0) / 1_000_000, client.process().isAlive());
        }
        if (tmp != null) {
            try (Stream<Path> walk = Files.walk(tmp)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> walk = Files.walk(from)) {
            for (Path p : (Iterable<Path>) walk::iterator) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        }
    }

    /** The last server log lines, without pygls message dumps, each cut to a readable length. */
    private String serverLog() {
        List<String> lines = new ArrayList<>();
        for (String l : stderr) {
            if (!l.contains("pygls.protocol")) {
                lines.add(l.length() > 300 ? l.substring(0, 300) + "\u2026" : l);
            }
        }
        return "--- server log (tail) ---\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
    }

    private static String brief(IndexStatus s) {
        if (s == null) {
            return "none";
        }
        String err = s.errors().isEmpty() ? "" : "; last error: " + s.errors().get(s.errors().size() - 1).message();
        return s.state() + "/" + s.phase() + " files " + s.filesIndexed() + "+" + s.filesFailed() + " failed of "
                + s.filesTotal() + ", chunks " + s.chunks() + ", lexical " + s.lexical().done() + "/" + s.lexical().total()
                + ", dense " + s.dense().done() + "/" + s.dense().total() + ", " + s.errors().size() + " errors" + err;
    }

    private IndexStatus waitReady() throws Exception {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        IndexStatus s = null;
        while (System.nanoTime() < deadline) {
            s = session.indexStatus();
            model.onStatus(s);
            if (s.isReady() || s.isError()) {
                return s;
            }
            Thread.sleep(250);
        }
        fail("index not ready after " + READY_TIMEOUT.toSeconds() + " s; last status " + brief(s) + "\n" + serverLog());
        return null;
    }

    @Test
    @Order(1)
    void initializeAnswersWithCapabilities() {
        assertNotNull(initResult.get("capabilities"), "InitializeResult.capabilities: " + initResult);
        assertTrue(client.isAlive());
    }

    @Test
    @Order(2)
    void indexStatusReachesReady() throws Exception {
        long t0 = System.nanoTime();
        ready = waitReady();
        System.out.printf("[real-server] ready after %d ms: %d files, %d chunks%n",
                (System.nanoTime() - t0) / 1_000_000, ready.filesTotal(), ready.chunks());
        assertEquals(IndexStatus.READY, ready.state(), brief(ready) + "\n" + serverLog());
        assertTrue(ready.filesTotal() > 0, "filesTotal");
        assertEquals(ready.filesTotal(), ready.filesIndexed() + ready.filesFailed(), "indexed + failed == total when ready");
        assertTrue(ready.chunks() > 0, "chunks");
        assertFalse(ready.version().isEmpty(), "version");
        assertEquals(6, ready.protocolVersion(), "protocol version");
        assertTrue(model.text().startsWith(StatusText.READY + " "), model.text());
        // the widget shows the server's display, as it is
        assertNotNull(ready.display(), "rag/indexStatus carries display");
        assertEquals("ok", ready.display().health());
        assertEquals(StatusText.number(ready.chunks()) + " chunks", ready.display().text());
        assertEquals(StatusText.READY + " " + ready.display().text(), model.text());
        assertEquals(ready.display().tooltip(), model.details());
        assertEquals("State: ready (idle)", ready.display().tooltip().get(0));
    }

    @Test
    @Order(3)
    void progressWasReported() throws Exception {
        // $/progress end and the last statusChanged may trail the ready answer slightly
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < deadline && progress.stream().noneMatch(ProgressEvent::isEnd)) {
            Thread.sleep(100);
        }
        System.out.printf("[real-server] %d $/progress, %d rag/statusChanged, %d workDoneProgress/create%n",
                progress.size(), statusChanged.size(), progressCreates.size());
        System.out.printf("[real-server] progress %s%n[real-server] status bar texts %s%n", progressSummary(), texts);
        assertFalse(progressCreates.isEmpty(), "window/workDoneProgress/create was requested");
        ProgressEvent begin = progress.stream().filter(ProgressEvent::isBegin).findFirst().orElse(null);
        assertNotNull(begin, "a $/progress begin; got " + progressSummary());
        assertEquals("ragls: indexing", begin.title());
        assertTrue(progress.stream().anyMatch(ProgressEvent::isEnd), "a $/progress end; got " + progressSummary());
        assertFalse(statusChanged.isEmpty(), "rag/statusChanged notifications");
        assertTrue(statusChanged.stream().anyMatch(IndexStatus::isReady), "a ready rag/statusChanged among " + statusChanged.size() + ", last: " + brief(statusChanged.get(statusChanged.size() - 1)));
        // the status bar went through a progress text before settling on ready
        assertTrue(model.text().startsWith(StatusText.READY + " "), model.text());
        assertTrue(texts.stream().anyMatch(t -> t.matches("RAG \u2026 (\\d[\\d,]*/\\d[\\d,]*|\\d+%|indexing)")
                || t.equals(StatusText.PENDING)), "texts seen: " + texts);
    }

    private String progressSummary() {
        List<String> out = new ArrayList<>();
        for (ProgressEvent e : progress) {
            out.add(e.kind() + (e.message() == null ? "" : " '" + e.message() + "'"));
        }
        if (out.size() > 12) {
            out = new ArrayList<>(out.subList(0, 6));
            out.add("\u2026 " + progress.size() + " in all, last: " + progress.get(progress.size() - 1).kind());
        }
        return out.toString();
    }

    @Test
    @Order(4)
    void retrieveReturnsTheInvoiceFunction() throws Exception {
        RetrieveResult r = session.retrieve(RetrieveParams.of(QUERY, 5, 4000));
        assertTrue(r.error() == null || r.error().isEmpty(), "error: " + r.error());
        assertFalse(r.chunks().isEmpty(), "no chunks");
        Chunk top = r.chunks().get(0);
        System.out.printf("[real-server] retrieve took %.1f ms server-side; top %s%n", r.tookMs(), top.label());
        assertEquals("billing/invoice.py", top.path(), "top chunk; all: " + labels(r));
        assertTrue(r.chunks().stream().anyMatch(c -> c.path().equals("billing/invoice.py")
                && "Invoice.compute_total".equals(c.symbol())), "Invoice.compute_total among " + labels(r));
        assertTrue(top.uri().startsWith("file:"), top.uri());
        assertTrue(r.context().startsWith("<rag_context>"), r.context());
        assertTrue(r.context().strip().endsWith("</rag_context>"), r.context());
        assertTrue(r.context().contains("file=\"billing/invoice.py\""), r.context());
        assertTrue(r.context().contains("def compute_total"), r.context());
        assertTrue(r.context().length() <= 4000, "context fits maxChars");
    }

    private static List<String> labels(RetrieveResult r) {
        List<String> out = new ArrayList<>();
        for (Chunk c : r.chunks()) {
            out.add(c.label());
        }
        return out;
    }

    @Test
    @Order(5)
    void prependingUsesTheServerContext() {
        RagChat.Prepared p = RagChat.prepare(QUERY, new RagChat.Options(true, 5, 4000, 10), session);
        assertEquals(null, p.ragNote());
        assertTrue(p.sentText().startsWith("<rag_context>"), p.sentText());
        assertTrue(p.sentText().endsWith("</rag_context>\n\n" + QUERY), p.sentText());
        Chunk invoice = p.sources().stream().filter(c -> c.path().equals("billing/invoice.py")).findFirst().orElseThrow();
        assertTrue(invoice.fileLine().matches("billing/invoice\\.py:\\d+"), invoice.fileLine());
        Path file = workspace.resolve(invoice.path());
        assertTrue(Files.isRegularFile(file), "source link resolves inside the workspace: " + file);
    }

    @Test
    @Order(6)
    void tinyBudgetGivesChunksWithoutContext() throws Exception {
        RetrieveResult r = session.retrieve(RetrieveParams.of(QUERY, 3, 10));
        assertEquals("", r.context());
        assertFalse(r.chunks().isEmpty());
        RagChat.Prepared p = RagChat.prepare(QUERY, new RagChat.Options(true, 3, 10, 10), session);
        assertEquals(QUERY, p.sentText(), "nothing prepended when nothing fits");
    }

    /**
     * The same words asked as a question and as a planned change (rag/retrieve intent, protocol 4).
     * As a question the fixture's docs/deployment.md ranks first; as a change, documentation
     * weighs 0.3 and a code file comes first (the fixture copy is no git repository, so no
     * commit history takes part). Through RagChat.prepare, as the chat panel's toggle sends it.
     */
    @Test
    @Order(7)
    void changeIntentPutsCodeBeforeDocs() throws Exception {
        String task = "deploy the branch to staging";
        RetrieveResult question = session.retrieve(RetrieveParams.of(task, 5, 4000));
        RetrieveResult change = session.retrieve(RetrieveParams.of(task, 5, 4000, RetrieveParams.Intent.CHANGE));
        System.out.printf("[real-server] '%s' as a question: %s%n[real-server] as a change: %s%n",
                task, labels(question), labels(change));
        assertTrue(question.error() == null || question.error().isEmpty(), "error: " + question.error());
        assertTrue(change.error() == null || change.error().isEmpty(), "error: " + change.error());
        assertFalse(question.chunks().isEmpty(), "question: no chunks");
        assertFalse(change.chunks().isEmpty(), "change: no chunks");
        assertEquals("docs/deployment.md", question.chunks().get(0).path(), "question, top chunk; all: " + labels(question));
        String changeTop = change.chunks().get(0).path();
        assertFalse(changeTop.endsWith(".md"), "change, top chunk must be code; all: " + labels(change));
        // wherever the doc still appears for a change, it ranks below code
        for (int i = 0; i < change.chunks().size(); i++) {
            if (change.chunks().get(i).path().equals("docs/deployment.md")) {
                assertTrue(i > 0, "docs/deployment.md first for a change: " + labels(change));
            }
        }

        RagChat.Prepared asQuestion = RagChat.prepare(task, new RagChat.Options(true, 5, 4000, 10), session);
        RagChat.Prepared asChange = RagChat.prepare(task,
                new RagChat.Options(true, 5, 4000, 10).withIntent(RetrieveParams.Intent.CHANGE), session);
        assertEquals(null, asQuestion.ragNote());
        assertEquals(null, asChange.ragNote());
        assertEquals("docs/deployment.md", asQuestion.sources().get(0).path(), "question sources: " + asQuestion.sources());
        assertFalse(asChange.sources().get(0).path().endsWith(".md"), "change sources: " + asChange.sources());
        assertEquals(changeTop, asChange.sources().get(0).path(), "prepare sends the same intent as the direct call");
        assertTrue(asQuestion.sentText().startsWith("<rag_context>\n<code_context file=\"docs/deployment.md\""),
                "question context leads with the doc: " + asQuestion.sentText());
        assertTrue(asChange.sentText().startsWith("<rag_context>\n<code_context file=\"" + changeTop + "\""),
                "change context leads with the code: " + asChange.sentText());
    }

    @Test
    @Order(8)
    void chatSendsContextToTheModelAndListsSources() throws Exception {
        AtomicReference<String> received = new AtomicReference<>();
        HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        http.createContext("/v1/chat/completions", ex -> {
            received.set(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            ex.getResponseHeaders().set("Content-Type", "text/event-stream");
            ex.sendResponseHeaders(200, 0);
            try (OutputStream os = ex.getResponseBody()) {
                for (String piece : new String[]{"compute_total ", "adds tax."}) {
                    os.write(("data: " + Trees.write(Trees.obj("choices", List.of(Trees.obj("delta", Trees.obj("content", piece)))))
                            + "\n\n").getBytes(StandardCharsets.UTF_8));
                    os.flush();
                }
                os.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
            }
        });
        http.start();
        try {
            RagChat chat = new RagChat();
            OpenAiChatClient llm = new OpenAiChatClient(ChatConfig.of(
                    "http://127.0.0.1:" + http.getAddress().getPort() + "/v1", "local-model", ""));
            RagChat.Turn turn = chat.send(QUERY, RagChat.Options.defaults(), session, llm, null);
            assertEquals("compute_total adds tax.", turn.answer());
            assertEquals(QUERY, turn.userText(), "history keeps the user's own text");
            assertTrue(turn.sources().stream().anyMatch(c -> c.path().equals("billing/invoice.py")));
            Map<String, Object> body = Trees.parseObject(received.get());
            List<Object> messages = Trees.asList(body.get("messages"));
            String sent = Trees.getString(Trees.asObject(messages.get(messages.size() - 1)), "content", "");
            assertTrue(sent.startsWith("<rag_context>") && sent.endsWith(QUERY), sent);
            assertTrue(sent.contains("billing/invoice.py"), sent);
        } finally {
            http.stop(0);
        }
    }

    @Test
    @Order(9)
    void invalidParamsAndUnknownMethodsKeepTheServerUp() throws Exception {
        try {
            client.requestSync(RaglsSession.RETRIEVE, Trees.obj("query", QUERY, "topK", 1000), REQUEST_TIMEOUT);
            fail("topK 1000 accepted");
        } catch (LspException e) {
            assertEquals(LspException.INVALID_PARAMS, e.code(), e.getMessage());
            assertTrue(e.getMessage().contains("topK"), e.getMessage());
        }
        try {
            client.requestSync("rag/doesNotExist", Trees.obj(), REQUEST_TIMEOUT);
            fail("unknown method accepted");
        } catch (LspException e) {
            assertEquals(LspException.METHOD_NOT_FOUND, e.code(), e.getMessage());
        }
        assertFalse(session.indexStatus().state().isEmpty(), "server still answers rag/indexStatus");
    }

    @Test
    @Order(10)
    void reindexAnswersAndReturnsToReady() throws Exception {
        Assumptions.assumeTrue(ready != null && ready.isReady(), "the first index run never became ready");
        Object started = Trees.asObject(client.requestSync(RaglsSession.REINDEX, Trees.obj(), REQUEST_TIMEOUT)).get("started");
        assertTrue(started instanceof Boolean, "rag/reindex result.started: " + started);
        IndexStatus s = waitReady();
        assertTrue(s.isReady(), brief(s));
        assertEquals(ready.filesTotal(), s.filesTotal());
    }

    @Test
    @Order(11)
    void thumbsAndMarksReachTheServersFeedbackFile() throws Exception {
        Assumptions.assumeTrue(ready != null && ready.isReady(), "the first index run never became ready");
        // the chat panel's thumbs: the prepared message's answer, rated through the core
        RagChat.Prepared p = RagChat.prepare(QUERY, RagChat.Options.defaults(), session);
        String panelId = p.resultId();
        assertNotNull(panelId, "the chat's answer carries no resultId: " + p.retrieval());
        String line = RagChat.rate(session, panelId, FeedbackParams.Rating.UP, "  the total with tax  ");
        assertEquals("Rating stored (polyglot).", line);

        // a rating with the place of the right code (1-based line of `def compute_total`)
        RetrieveResult r = session.retrieve(RetrieveParams.of(QUERY, 5, 4000));
        assertTrue(r.rateable(), "no resultId: " + r);
        assertFalse(r.resultId().equals(panelId), "two answers, one id");
        List<String> lines = Files.readAllLines(workspace.resolve("billing/invoice.py"));
        int def = 1;
        while (!lines.get(def - 1).contains("def compute_total")) {
            def++;
        }
        FeedbackResult down = session.feedback(r.resultId(), FeedbackParams.Rating.DOWN,
                List.of(new FeedbackParams.Place("billing/invoice.py", def)), null);
        assertTrue(down.stored(), down.toString());
        assertEquals(List.of("polyglot"), down.folders());

        // what the server stored, privately, outside the workspace
        Path dir = tmp.resolve("state").resolve("ragls").resolve("feedback");
        List<Path> files;
        try (Stream<Path> list = Files.list(dir)) {
            files = list.filter(f -> f.toString().endsWith(".jsonl")).toList();
        }
        assertEquals(1, files.size(), files.toString());
        Map<String, com.google.gson.JsonObject> byId = new java.util.HashMap<>();
        for (String l : Files.readAllLines(files.get(0))) {
            com.google.gson.JsonObject rec = Trees.parseTree(l).getAsJsonObject();
            byId.put(rec.get("id").getAsString(), rec);
        }
        com.google.gson.JsonObject up = byId.get(panelId);
        assertNotNull(up, "the thumbs-up is not stored: " + byId.keySet());
        assertEquals("up", up.get("rating").getAsString());
        assertEquals(QUERY, up.get("query").getAsString());
        assertEquals("the total with tax", up.get("comment").getAsString());
        com.google.gson.JsonObject marked = byId.get(r.resultId());
        assertNotNull(marked, "the rating with a mark is not stored");
        assertEquals("down", marked.get("rating").getAsString());
        com.google.gson.JsonObject place = marked.getAsJsonArray("relevant").get(0).getAsJsonObject();
        assertEquals("billing/invoice.py", place.get("path").getAsString());
        assertEquals(def, place.get("line").getAsInt());

        // an id this server never gave, a bad rating: -32602 naming the field; the panel gets a line
        try {
            session.feedback("0123456789abcdef", FeedbackParams.Rating.UP, null, null);
            fail("an unknown resultId was accepted");
        } catch (LspException e) {
            assertEquals(LspException.INVALID_PARAMS, e.code(), e.getMessage());
            assertTrue(e.getMessage().contains("resultId"), e.getMessage());
        }
        try {
            client.requestSync(RaglsSession.FEEDBACK, Trees.obj("resultId", panelId, "rating", "meh"), REQUEST_TIMEOUT);
            fail("rating meh accepted");
        } catch (LspException e) {
            assertEquals(LspException.INVALID_PARAMS, e.code(), e.getMessage());
            assertTrue(e.getMessage().contains("rating"), e.getMessage());
        }
        String refused = RagChat.rate(session, "0123456789abcdef", FeedbackParams.Rating.DOWN, null);
        assertTrue(refused.startsWith("Rating not sent: ") && refused.contains("resultId"), refused);
        assertTrue(RagChat.rate(session, null, FeedbackParams.Rating.UP, null).startsWith("This answer cannot be rated"));
    }
}
