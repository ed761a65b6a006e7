package dev.ragls.core;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.ragls.core.lsp.Trees;
import dev.ragls.core.protocol.IndexStatus;
import dev.ragls.core.protocol.StatusDisplay;
import dev.ragls.core.status.ServerState;
import dev.ragls.core.status.StatusModel;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The status case tables (tests/fixtures/status-cases.json and, for multi-root workspaces,
 * status-folder-cases.json): each case's {@code display} is what the server sends for its status
 * (tests/unit/test_status_cases.py); the widget shows exactly those strings, with the glyph of the
 * health. The client maps nothing.
 */
class StatusDisplayCasesTest {
    static final Map<String, String> GLYPHS = Map.of("ok", "\u2713", "indexing", "\u2026", "warning", "\u26a0", "error", "\u2717");

    static Path table(String file) {
        String fixture = System.getenv("RAGLS_FIXTURE");
        Path fromFixture = fixture == null ? null : Path.of(fixture).getParent().resolve(file);
        return fromFixture != null && Files.isRegularFile(fromFixture) ? fromFixture : Path.of("../../tests/fixtures/" + file);
    }

    static StatusModel running(IndexStatus s) {
        StatusModel m = new StatusModel();
        m.setServerState(ServerState.RUNNING, null);
        m.onStatus(s);
        return m;
    }

    @Test
    void everyCase() throws Exception {
        run("status-cases.json", 10);
    }

    @Test
    void everyMultiRootCase() throws Exception {
        run("status-folder-cases.json", 4);
    }

    private static void run(String file, int min) throws Exception {
        JsonObject t = Trees.parseTree(Files.readString(table(file), StandardCharsets.UTF_8)).getAsJsonObject();
        assertTrue(t.getAsJsonArray("cases").size() >= min, "cases: " + t.getAsJsonArray("cases").size());
        for (JsonElement o : t.getAsJsonArray("cases")) {
            JsonObject c = o.getAsJsonObject();
            String name = c.get("name").getAsString();
            JsonObject st = t.getAsJsonObject("base").deepCopy();
            c.getAsJsonObject("status").entrySet().forEach(e -> st.add(e.getKey(), e.getValue()));
            st.add("display", c.get("display"));
            IndexStatus s = IndexStatus.fromJson(st);
            StatusDisplay want = s.display();
            // the widget (a running server, no newer progress) shows the display as it is
            StatusModel m = running(s);
            assertEquals("RAG " + GLYPHS.get(want.health()) + " " + want.text(), m.text(), name);
            assertEquals(want.tooltip(), m.details(), name);
            assertEquals(c.getAsJsonObject("display").getAsJsonArray("tooltip").size(), want.tooltip().size(), name);
        }
    }

    @Test
    void theDisplayWinsOverTheFields() {
        // a ready status with nothing failed, whose display the server made an error: shown as sent
        IndexStatus s = IndexStatus.fromJson(Trees.tree(Trees.obj("state", "ready", "phase", "idle", "chunks", 5,
                "display", Trees.obj("health", "error", "text", "from the server 7", "tooltip", List.of("only", "these")))));
        StatusModel m = running(s);
        assertEquals("RAG \u2717 from the server 7", m.text());
        assertEquals(List.of("only", "these"), m.details());
    }

    @Test
    void anOldServerWithoutDisplayShowsItsState() {
        IndexStatus s = IndexStatus.fromJson(Trees.tree(Trees.obj("state", "error", "phase", "waiting", "chunks", 5)));
        StatusModel m = running(s);
        assertEquals("RAG \u2717 error", m.text());
        assertEquals(List.of("State: error (waiting)"), m.details());
        assertEquals("RAG \u2713 ready", running(IndexStatus.fromJson(Trees.tree(Trees.obj("state", "ready")))).text());
    }
}
