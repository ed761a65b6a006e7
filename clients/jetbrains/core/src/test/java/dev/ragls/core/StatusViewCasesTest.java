package dev.ragls.core;

import dev.ragls.core.json.Json;
import dev.ragls.core.protocol.IndexStatus;
import dev.ragls.core.status.ServerState;
import dev.ragls.core.status.StatusModel;
import dev.ragls.core.status.StatusView;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shared status case tables (tests/fixtures/status-cases.json and, for multi-root
 * workspaces, status-folder-cases.json), as VS Code and Neovim run them.
 */
class StatusViewCasesTest {
    static Path table(String file) {
        String fixture = System.getenv("RAGLS_FIXTURE");
        Path fromFixture = fixture == null ? null : Path.of(fixture).getParent().resolve(file);
        return fromFixture != null && Files.isRegularFile(fromFixture) ? fromFixture : Path.of("../../tests/fixtures/" + file);
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
        Map<String, Object> t = Json.parseObject(Files.readString(table(file), StandardCharsets.UTF_8));
        List<Object> cases = Json.getList(t, "cases");
        assertTrue(cases.size() >= min, "cases: " + cases.size());
        for (Object o : cases) {
            Map<String, Object> c = Json.asObject(o);
            String name = Json.getString(c, "name", "?");
            Map<String, Object> st = new LinkedHashMap<>(Json.getObject(t, "base"));
            st.putAll(Json.getObject(c, "status"));
            IndexStatus s = IndexStatus.fromJson(st);
            List<String> tooltip = new ArrayList<>();
            for (Object line : Json.getList(c, "tooltip")) {
                tooltip.add((String) line);
            }
            StatusView v = StatusView.of(s);
            assertEquals(Json.getString(c, "icon", ""), v.icon(), name);
            assertEquals(Json.getString(c, "text", ""), v.text(), name);
            assertEquals(tooltip, v.tooltip(), name);
            // the status bar shows it (a running server, no newer progress)
            StatusModel m = new StatusModel();
            m.setServerState(ServerState.RUNNING, null);
            m.onStatus(s);
            assertEquals("RAG " + StatusView.glyph(v.icon()) + " " + v.text(), m.text(), name);
            assertEquals(tooltip, m.details(), name);
        }
    }
}
