package dev.ragls.core;

import dev.ragls.core.chat.RagContext;
import dev.ragls.core.lsp.LspClient;
import dev.ragls.core.lsp.RaglsSession;
import dev.ragls.core.lsp.Trees;
import dev.ragls.core.protocol.Chunk;
import dev.ragls.core.protocol.IndexStatus;
import dev.ragls.core.protocol.RetrieveParams;
import dev.ragls.core.protocol.RetrieveResult;
import dev.ragls.core.server.ClientSettings;
import dev.ragls.core.status.ServerState;
import dev.ragls.core.status.StatusModel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Issue 16 with the real server: two workspace folders sent as LSP4IJ sends a project's base
 * directories (each named by its directory). The status model lists both folders, and a question
 * whose answer only the second folder holds comes back labelled {@code beta/...}. Needs
 * {@code RAGLS_SERVER}; skipped without it unless {@code CI=true}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MultiRootServerTest {
    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final String TOKEN = "QUOKKA_LEDGER_SENTINEL_7731";

    private Path tmp;
    private LspClient client;
    private RaglsSession session;
    private final StatusModel model = new StatusModel();
    private final List<String> stderr = new CopyOnWriteArrayList<>();

    @BeforeAll
    void start() throws Exception {
        String server = System.getenv("RAGLS_SERVER");
        if (server == null || server.isBlank() || !Files.isExecutable(Path.of(server))) {
            String why = "real-server tests need RAGLS_SERVER (executable, got " + server + ")";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                fail(why);
            }
            Assumptions.abort(why);
        }
        tmp = Files.createTempDirectory("ragls-jb-mr");
        Path alpha = tmp.resolve("alpha");
        Path beta = tmp.resolve("beta");
        write(alpha.resolve("inventory/stock.py"), "def restock(items, threshold=5):\n"
                + "    # Reorder every item below the threshold.\n"
                + "    return [i for i in items if i.count < threshold]\n");
        write(beta.resolve("ledger/reconcile.py"), TOKEN + " = \"quokka\"\n\n\n"
                + "def reconcile_quokka_ledger(entries, statement):\n"
                + "    # Match every quokka ledger entry to a statement line by amount and date.\n"
                + "    unmatched = [e for e in entries if (e.amount, e.date) not in statement]\n"
                + "    return " + TOKEN + ", unmatched\n");
        Path cache = Files.createDirectories(tmp.resolve("cache"));
        client = LspClient.start(List.of(server), alpha,
                Map.of("XDG_CACHE_HOME", cache.toString(), "RAGLS_CACHE_DIR", cache.resolve("ragls").toString()),
                stderr::add);
        client.onRequest("window/workDoneProgress/create", params -> null);
        client.onNotification(RaglsSession.STATUS_CHANGED, p -> model.onStatus(IndexStatus.fromJson(Trees.tree(p))));
        ClientSettings settings = ClientSettings.defaults();
        client.setConfiguration(settings.toServerSettings());
        session = new RaglsSession(client, TIMEOUT);
        model.setServerState(ServerState.STARTING, null);
        client.initialize(List.of(alpha, beta), settings.toServerSettings(), TIMEOUT);
        model.setServerState(ServerState.RUNNING, null);
    }

    static void write(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
    }

    @AfterAll
    void stop() throws IOException {
        if (client != null) {
            client.shutdown(Duration.ofSeconds(15));
        }
        if (tmp != null) {
            try (Stream<Path> walk = Files.walk(tmp)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private IndexStatus readyWithFolders() throws Exception {
        IndexStatus s = session.indexStatus();
        // An older server indexes only the first folder: say so now instead of timing out.
        assertTrue(s.protocolVersion() >= 3, "the server speaks protocol " + s.protocolVersion() + ", not 3 (multi-root)");
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!(s.isReady() && s.folders().size() == 2)) {
            if (System.nanoTime() > deadline) {
                fail("no ready status with 2 folders: " + s.state() + ", " + s.folders() + "\n" + String.join("\n", stderr.subList(Math.max(0, stderr.size() - 10), stderr.size())));
            }
            Thread.sleep(200);
            s = session.indexStatus();
        }
        model.onStatus(s);
        return s;
    }

    @Test
    void statusListsBothFoldersUnderTheTotals() throws Exception {
        IndexStatus s = readyWithFolders();
        assertEquals(List.of("alpha", "beta"), s.folders().stream().map(IndexStatus.FolderStatus::name).toList());
        assertEquals(s.chunks(), s.folders().stream().mapToLong(IndexStatus.FolderStatus::chunks).sum(), "totals at the top level");
        assertTrue(model.text().startsWith("RAG \u2713 "), model.text());
        List<String> lines = model.details().stream().filter(l -> l.startsWith("Folder ")).toList();
        assertEquals(2, lines.size(), String.join("\n", model.details()));
        assertTrue(lines.get(0).startsWith("Folder alpha: ready (idle), 1/1 files"), lines.get(0));
        assertTrue(lines.get(1).startsWith("Folder beta: ready (idle), 1/1 files"), lines.get(1));
        assertEquals(s.display().tooltip(), model.details(), "the widget shows the server's tooltip lines");
    }

    @Test
    void theSecondFolderAnswersLabelledWithItsName() throws Exception {
        IndexStatus s = readyWithFolders();
        RetrieveResult r = session.retrieve(RetrieveParams.of("how does reconcile_quokka_ledger match the quokka ledger entries", 5, null));
        Chunk hit = r.chunks().stream()
                .filter(c -> "reconcile_quokka_ledger".equals(c.symbol()))
                .findFirst().orElse(null);
        assertNotNull(hit, "no reconcile_quokka_ledger chunk: " + r.chunks());
        assertEquals("beta", hit.folder());
        assertEquals("ledger/reconcile.py", hit.path());
        assertTrue(hit.uri().endsWith("/beta/ledger/reconcile.py"), hit.uri());
        assertTrue(hit.content().contains(TOKEN));
        assertTrue(r.context().contains("<code_context file=\"beta/ledger/reconcile.py\""), r.context());
        assertTrue(RagContext.sourcesLine(r.chunks(), s.isMultiRoot()).contains("beta/ledger/reconcile.py:4"),
                RagContext.sourcesLine(r.chunks(), s.isMultiRoot()));
        // Restricted to the first folder, the second one's function is not found.
        RetrieveResult onlyAlpha = session.retrieve(new RetrieveParams("reconcile_quokka_ledger", 5, null, null, null, List.of("alpha")));
        assertTrue(onlyAlpha.chunks().stream().noneMatch(c -> "beta".equals(c.folder())), onlyAlpha.chunks().toString());
    }
}
