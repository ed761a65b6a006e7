package dev.ragls.core;

import dev.ragls.core.chat.RagContext;
import dev.ragls.core.json.Json;
import dev.ragls.core.protocol.Chunk;
import dev.ragls.core.protocol.IndexStatus;
import dev.ragls.core.protocol.RetrieveParams;
import dev.ragls.core.protocol.RetrieveResult;
import dev.ragls.core.status.ServerState;
import dev.ragls.core.status.StatusModel;
import dev.ragls.core.status.StatusView;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Issue 16 (protocol 3): multi-root payloads, their labels, and an older server's payloads. */
class MultiRootTest {
    static final String TWO_FOLDERS = "{\"context\":\"<rag_context>\\n</rag_context>\",\"tookMs\":3,\"chunks\":["
            + chunk("web", "file:///ws/web/src/util.ts", "src/util.ts", 4) + ","
            + chunk("api", "file:///ws/api/src/util.ts", "src/util.ts", 4) + ","
            + chunk("web", "file:///ws/web/src/util.ts", "src/util.ts", 4) + "]}";

    static String chunk(String folder, String uri, String path, int line) {
        return "{\"uri\":\"" + uri + "\",\"path\":\"" + path + "\",\"folder\":\"" + folder + "\","
                + "\"folderUri\":\"file:///ws/" + folder + "\",\"range\":{\"start\":{\"line\":" + line
                + ",\"character\":0},\"end\":{\"line\":" + (line + 3) + ",\"character\":0}},\"symbol\":\"load\","
                + "\"kind\":\"function\",\"language\":\"typescript\",\"score\":0.5,\"content\":\"export function load() {}\"}";
    }

    @Test
    void chunksNameTheirFolderAndSourcesReadFolderSlashPath() {
        RetrieveResult r = RetrieveResult.fromJson(Json.parseObject(TWO_FOLDERS));
        Chunk web = r.chunks().get(0);
        assertEquals("web", web.folder());
        assertEquals("file:///ws/web", web.folderUri());
        assertEquals("web/src/util.ts", web.displayPath(true));
        assertEquals("src/util.ts", web.displayPath(false), "one folder: the path as before");
        assertEquals("web/src/util.ts:5-7 load", web.label(true));
        // The same relative path in two folders is two sources; the repeat is dropped.
        assertEquals(2, RagContext.sources(r.chunks()).size());
        assertEquals("Sources: web/src/util.ts:5, api/src/util.ts:5", RagContext.sourcesLine(r.chunks(), true));
    }

    @Test
    void aVersionTwoServerSendsNoFolders() {
        RetrieveResult r = RetrieveResult.fromJson(Json.parseObject(ProtocolTest.RETRIEVE_RESULT));
        Chunk c = r.chunks().get(0);
        assertNull(c.folder());
        assertEquals("billing/invoice.py", c.displayPath(true));
        assertEquals("Sources: billing/invoice.py:22", RagContext.sourcesLine(r.chunks(), true));
        IndexStatus s = IndexStatus.fromJson(Json.parseObject("{\"state\":\"ready\",\"phase\":\"idle\",\"chunks\":3,\"protocolVersion\":2}"));
        assertTrue(s.folders().isEmpty());
        assertFalse(s.isMultiRoot());
        assertTrue(StatusView.of(s).tooltip().stream().noneMatch(l -> l.startsWith("Folder ")));
    }

    @Test
    void statusTotalsInTheWidgetFoldersInThePopup() {
        IndexStatus s = IndexStatus.fromJson(Json.parseObject("{\"state\":\"ready\",\"phase\":\"idle\",\"filesTotal\":5,"
                + "\"filesIndexed\":5,\"chunks\":1234,\"protocolVersion\":3,\"folders\":["
                + "{\"name\":\"api\",\"uri\":\"file:///ws/api\",\"path\":\"/ws/api\",\"state\":\"ready\",\"phase\":\"idle\","
                + "\"filesTotal\":3,\"filesIndexed\":3,\"filesFailed\":0,\"chunks\":1000,\"errors\":[],\"message\":null,\"nestedIn\":null},"
                + "{\"name\":\"web\",\"uri\":\"file:///ws/web\",\"path\":\"/ws/web\",\"state\":\"ready\",\"phase\":\"idle\","
                + "\"filesTotal\":2,\"filesIndexed\":2,\"filesFailed\":0,\"chunks\":234},"
                + "{\"name\":\"lib\",\"uri\":\"file:///ws/web/lib\",\"path\":\"/ws/web/lib\",\"state\":\"ready\",\"phase\":\"idle\","
                + "\"nestedIn\":\"web\"}]}"));
        assertTrue(s.isMultiRoot());
        assertEquals(3, s.folders().size());
        StatusModel m = new StatusModel();
        m.setServerState(ServerState.RUNNING, null);
        m.onStatus(s);
        assertEquals("RAG \u2713 1,234 chunks", m.text());
        List<String> folders = m.details().stream().filter(l -> l.startsWith("Folder ")).toList();
        assertEquals(List.of("Folder api: ready (idle), 3/3 files, 1,000 chunks",
                "Folder web: ready (idle), 2/2 files, 234 chunks",
                "Folder lib: inside web"), folders);
    }

    @Test
    void retrieveParamsCarryFolders() {
        assertEquals("{\"query\":\"q\",\"folders\":[\"web\"]}",
                Json.write(new RetrieveParams("q", null, null, null, null, List.of("web"))));
        assertEquals("{\"query\":\"q\"}", Json.write(new RetrieveParams("q", null, null, null, null, List.of())));
    }
}
