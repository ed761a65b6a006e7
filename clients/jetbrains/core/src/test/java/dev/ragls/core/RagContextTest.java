package dev.ragls.core;

import dev.ragls.core.chat.RagContext;
import dev.ragls.core.lsp.Trees;
import dev.ragls.core.protocol.Chunk;
import dev.ragls.core.protocol.RetrieveResult;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RagContextTest {
    static final String CTX = "<rag_context>\n<code_context file=\"a.py\" lines=\"1-2\">\nx = 1\n</code_context>\n</rag_context>";

    @Test
    void prependsContextBlockAndKeepsUserText() {
        String sent = RagContext.prepend(CTX + "\n", "What is x?\n  (indented)");
        assertEquals(CTX + "\n\nWhat is x?\n  (indented)", sent);
        assertTrue(RagContext.hasContext(sent));
        assertEquals("What is x?\n  (indented)", RagContext.strip(sent));
    }

    @Test
    void noContextMeansUnchangedText() {
        assertEquals("hi", RagContext.prepend("", "hi"));
        assertEquals("hi", RagContext.prepend(null, "hi"));
        assertEquals("hi", RagContext.prepend("  \n", "hi"));
        assertFalse(RagContext.hasContext("hi"));
        assertEquals("hi", RagContext.strip("hi"));
        assertEquals("", RagContext.prepend(CTX, null).substring(CTX.length() + 2));
    }

    @Test
    void sourcesAreDistinctAndRanked() {
        RetrieveResult r = RetrieveResult.fromJson(Trees.parseTree(ProtocolTest.RETRIEVE_RESULT));
        Chunk c = r.chunks().get(0);
        Chunk other = Chunk.fromJson(Trees.tree(Trees.obj("path", "web/src/session.ts", "range",
                Trees.obj("start", Trees.obj("line", 2, "character", 0), "end", Trees.obj("line", 9, "character", 0)))));
        List<Chunk> s = RagContext.sources(List.of(c, other, c));
        assertEquals(2, s.size());
        assertEquals("Sources: billing/invoice.py:22, web/src/session.ts:3", RagContext.sourcesLine(List.of(c, other, c)));
        assertEquals("", RagContext.sourcesLine(List.of()));
    }
}
