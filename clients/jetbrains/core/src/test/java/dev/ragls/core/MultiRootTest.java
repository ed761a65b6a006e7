package dev.ragls.core;

import dev.ragls.core.chat.RagContext;
import dev.ragls.core.lsp.Trees;
import dev.ragls.core.protocol.Chunk;
import dev.ragls.core.protocol.IndexStatus;
import dev.ragls.core.protocol.RetrieveParams;
import dev.ragls.core.protocol.RetrieveResult;
import dev.ragls.core.status.ServerState;
import dev.ragls.core.status.StatusModel;
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
        RetrieveResult r = RetrieveResult.fromJson(Trees.parseTree(TWO_FOLDERS));
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
        RetrieveResult r = RetrieveResult.fromJson(Trees.parseTree(ProtocolTest.RETRIEVE_RESULT));
        Chunk c = r.chunks().get(0);
        assertNull(c.folder());
        assertEquals("billing/invoice.py", c.displayPath(true));
        assertEquals("Sources: billing/invoice.py:22", RagContext.sourcesLine(r.chunks(), true));
        IndexStatus s = IndexStatus.fromJson(Trees.parseTree("{\"state\":\"ready\",\"phase\":\"idle\",\"chunks\":3,\"protocolVersion\":2}"));
        assertTrue(s.folders().isEmpty());
        assertFalse(s.isMultiRoot());
        // no display from a server that old: its state, as it is
        assertEquals(List.of("State: ready (idle)"), s.shown().tooltip());
        assertEquals("ready", s.shown().text());
    }

    @Test
    void theWidgetShowsTheServersFolderLines() {
        IndexStatus s = IndexStatus.fromJson(Trees.parseTree("{\"state\":\"ready\",\"phase\":\"idle\",\"filesTotal\":5,"
                + "\"filesIndexed\":5,\"chunks\":1234,\"protocolVersion\":3,\"folders\":["
                + "{\"name\":\"api\",\"uri\":\"file:///ws/api\",\"path\":\"/ws/api\",\"state\":\"ready\",\"phase\":\"idle\","
                + "\"filesTotal\":3,\"filesIndexed\":3,\"filesFailed\":0,\"chunks\":1000,\"errors\":[],\"message\":null,\"nestedIn\":null},"
                + "{\"name\":\"web\",\"uri\":\"file:///ws/web\",\"path\":\"/ws/web\",\"state\":\"ready\",\"phase\":\"idle\","
                + "\"filesTotal\":2,\"filesIndexed\":2,\"filesFailed\":0,\"chunks\":234}],"
                + "\"display\":{\"health\":\"ok\",\"text\":\"1,234 chunks\",\"tooltip\":[\"State: ready (idle)\","
                + "\"Folder api: from the server\",\"Folder web: also from the server\"]}}"));
        assertTrue(s.isMultiRoot());
        assertEquals(2, s.folders().size());
        StatusModel m = new StatusModel();
        m.setServerState(ServerState.RUNNING, null);
        m.onStatus(s);
        assertEquals("RAG \u2713 1,234 chunks", m.text());
        assertEquals(List.of("State: ready (idle)", "Folder api: from the server", "Folder web: also from the server"), m.details());
    }

    @Test
    void retrieveParamsCarryFolders() {
        assertEquals("{\"query\":\"q\",\"folders\":[\"web\"]}",
                Trees.write(new RetrieveParams("q", null, null, null, null, List.of("web")).toJson()));
        assertEquals("{\"query\":\"q\"}", Trees.write(new RetrieveParams("q", null, null, null, null, List.of()).toJson()));
    }
}
