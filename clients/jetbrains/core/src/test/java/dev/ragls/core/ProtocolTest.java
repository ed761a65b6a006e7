package dev.ragls.core;

import dev.ragls.core.lsp.Trees;
import dev.ragls.core.protocol.Chunk;
import dev.ragls.core.protocol.IndexStatus;
import dev.ragls.core.protocol.ProgressEvent;
import dev.ragls.core.protocol.RetrieveParams;
import dev.ragls.core.protocol.RetrieveResult;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProtocolTest {
    static final String RETRIEVE_RESULT = "{\"context\":\"<rag_context>\\n<code_context file=\\\"billing/invoice.py\\\" lines=\\\"22-25\\\" "
            + "symbol=\\\"Invoice.compute_total\\\">\\n...\\n</code_context>\\n</rag_context>\",\"chunks\":[{"
            + "\"uri\":\"file:///w/billing/invoice.py\",\"path\":\"billing/invoice.py\","
            + "\"range\":{\"start\":{\"line\":21,\"character\":0},\"end\":{\"line\":25,\"character\":0}},"
            + "\"symbol\":\"Invoice.compute_total\",\"kind\":\"method\",\"language\":\"python\",\"score\":0.91,"
            + "\"content\":\"def compute_total(self)\",\"future\":1}],\"tookMs\":12.5,\"error\":null,\"extra\":{}}";

    @Test
    void parsesRetrieveResultAndIgnoresUnknownFields() {
        RetrieveResult r = RetrieveResult.fromJson(Trees.parseTree(RETRIEVE_RESULT));
        assertTrue(r.hasContext());
        assertNull(r.error());
        assertEquals(12.5, r.tookMs());
        assertEquals(1, r.chunks().size());
        Chunk c = r.chunks().get(0);
        assertEquals("billing/invoice.py", c.path());
        assertEquals("Invoice.compute_total", c.symbol());
        assertEquals("method", c.kind());
        assertEquals(22, c.firstLine());
        assertEquals(25, c.lastLine(), "exclusive end at character 0 ends on the previous line");
        assertEquals("billing/invoice.py:22", c.fileLine());
        assertEquals("billing/invoice.py:22-25 Invoice.compute_total", c.label());
    }

    @Test
    void chunkLinesWithNonZeroEndCharacter() {
        Chunk c = Chunk.fromJson(Trees.parseTree("{\"path\":\"a.py\",\"range\":{\"start\":{\"line\":0,\"character\":0},"
                + "\"end\":{\"line\":0,\"character\":9}},\"symbol\":null}"));
        assertEquals(1, c.firstLine());
        assertEquals(1, c.lastLine());
        assertEquals("a.py:1", c.label());
        assertNull(c.symbol());
    }

    @Test
    void retrieveParamsLeaveOutDefaults() {
        assertEquals("{\"query\":\"q\"}", Trees.write(RetrieveParams.of("q", null, null).toJson()));
        assertEquals("{\"query\":\"q\",\"topK\":3,\"maxChars\":100,\"paths\":[\"src/**\"],\"languages\":[\"python\"]}",
                Trees.write(new RetrieveParams("q", 3, 100, List.of("src/**"), List.of("python")).toJson()));
        assertThrows(IllegalArgumentException.class, () -> RetrieveParams.of("  ", null, null));
        assertEquals(RetrieveParams.MAX_QUERY_CHARS, RetrieveParams.clampQuery("x".repeat(5000)).length());
    }

    @Test
    void retrieveParamsSendIntentChangeOnly() {
        assertEquals("{\"query\":\"q\",\"topK\":5,\"maxChars\":4000,\"intent\":\"change\"}",
                Trees.write(RetrieveParams.of("q", 5, 4000, RetrieveParams.Intent.CHANGE).toJson()));
        assertEquals("{\"query\":\"q\",\"folders\":[\"web\"],\"intent\":\"change\"}",
                Trees.write(new RetrieveParams("q", null, null, null, null, List.of("web"), RetrieveParams.Intent.CHANGE).toJson()));
        // a question is the server's default: no intent key, so older servers (protocol < 4) are unaffected
        for (RetrieveParams p : List.of(RetrieveParams.of("q", 5, 4000, RetrieveParams.Intent.QUESTION),
                RetrieveParams.of("q", 5, 4000, null), RetrieveParams.of("q", 5, 4000),
                new RetrieveParams("q", 5, 4000, null, null), new RetrieveParams("q", 5, 4000, null, null, null))) {
            assertFalse(p.toJson().has("intent"), Trees.write(p.toJson()));
            assertEquals("{\"query\":\"q\",\"topK\":5,\"maxChars\":4000}", Trees.write(p.toJson()));
        }
    }

    @Test
    void parsesIndexStatus() {
        Map<String, Object> m = Trees.parseObject("{\"state\":\"indexing\",\"phase\":\"dense\",\"filesTotal\":5000,"
                + "\"filesIndexed\":1200,\"filesFailed\":34,\"filesSkipped\":7,\"skippedByReason\":{\"binary\":3,\"secret\":4},"
                + "\"chunks\":9000,\"lexical\":{\"done\":1234,\"total\":5000},\"dense\":{\"done\":1000,\"total\":5000},"
                + "\"lastIndexedAt\":null,\"embedder\":{\"provider\":\"local\",\"model\":\"all-MiniLM-L6-v2\",\"dimension\":384},"
                + "\"store\":{\"kind\":\"edge\",\"location\":\"/c\"},\"cache\":{\"hits\":1,\"misses\":3,\"hitRate\":0.25},"
                + "\"errors\":[{\"path\":\"x.py\",\"message\":\"bad\",\"time\":\"t\"}],\"workspace\":\"/w\",\"version\":\"0.1.0\"}");
        IndexStatus s = IndexStatus.fromJson(Trees.tree(m));
        assertTrue(s.isIndexing());
        assertFalse(s.isReady());
        assertEquals(1200, s.filesIndexed());
        assertNull(s.display(), "no display in this payload");
        assertEquals("indexing", s.shown().text());
        assertEquals(Map.of("binary", 3L, "secret", 4L), s.skippedByReason());
        assertEquals(1234, s.lexical().done());
        assertEquals(384, s.embedder().dimension());
        assertEquals("edge", s.store().kind());
        assertEquals(0.25, s.cache().hitRate());
        assertEquals("x.py", s.errors().get(0).path());
        assertNull(s.lastIndexedAt());
    }

    @Test
    void parsesProgress() {
        ProgressEvent b = ProgressEvent.fromJson(Trees.parseTree(
                "{\"token\":\"t1\",\"value\":{\"kind\":\"begin\",\"title\":\"ragls: indexing\",\"message\":\"0/13 files\",\"percentage\":0}}"));
        assertTrue(b.isBegin());
        assertArrayEquals(new long[]{0, 13}, b.files());
        ProgressEvent r = ProgressEvent.fromJson(Trees.parseTree(
                "{\"token\":7,\"value\":{\"kind\":\"report\",\"message\":\"1,234/5,000 files\",\"percentage\":24}}"));
        assertEquals("7", r.token());
        assertTrue(r.isReport());
        assertEquals(24, r.percentage());
        assertArrayEquals(new long[]{1234, 5000}, r.files());
        ProgressEvent e = ProgressEvent.fromJson(Trees.parseTree(
                "{\"token\":\"t1\",\"value\":{\"kind\":\"end\",\"message\":\"13 files, 40 chunks\"}}"));
        assertTrue(e.isEnd());
        assertNull(e.files());
        assertNull(e.percentage());
    }
}
