package dev.ragls.core;

import dev.ragls.core.chat.ChatException;
import dev.ragls.core.chat.ChatMessage;
import dev.ragls.core.chat.ChatTransport;
import dev.ragls.core.chat.RagChat;
import dev.ragls.core.lsp.Trees;
import dev.ragls.core.protocol.RetrieveParams;
import dev.ragls.core.protocol.RetrieveResult;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RagChatTest {
    /** Records what would be sent and answers with fixed deltas. */
    static final class FakeTransport implements ChatTransport {
        final List<List<ChatMessage>> calls = new ArrayList<>();
        final String[] deltas;

        FakeTransport(String... deltas) {
            this.deltas = deltas;
        }

        @Override
        public String stream(List<ChatMessage> messages, Consumer<String> onDelta) {
            calls.add(messages);
            StringBuilder sb = new StringBuilder();
            for (String d : deltas) {
                onDelta.accept(d);
                sb.append(d);
            }
            return sb.toString();
        }
    }

    static final RetrieveResult HIT = RetrieveResult.fromJson(Trees.parseTree(ProtocolTest.RETRIEVE_RESULT));

    @Test
    void sendsContextButKeepsOriginalTextInHistory() throws Exception {
        RagChat chat = new RagChat();
        FakeTransport t = new FakeTransport("It ", "adds tax.");
        List<RetrieveParams> asked = new ArrayList<>();
        StringBuilder streamed = new StringBuilder();
        RagChat.Turn turn = chat.send("How is the total computed?", new RagChat.Options(true, 3, 2000, 10),
                p -> {
                    asked.add(p);
                    return HIT;
                }, t, new RagChat.Listener() {
                    @Override
                    public void onDelta(String text) {
                        streamed.append(text);
                    }
                });
        assertEquals("How is the total computed?", asked.get(0).query());
        assertEquals(3, asked.get(0).topK());
        assertEquals(2000, asked.get(0).maxChars());
        List<ChatMessage> sent = t.calls.get(0);
        assertEquals("system", sent.get(0).role());
        ChatMessage user = sent.get(sent.size() - 1);
        assertTrue(user.content().startsWith("<rag_context>"), user.content());
        assertTrue(user.content().endsWith("</rag_context>\n\nHow is the total computed?"), user.content());
        assertEquals("It adds tax.", turn.answer());
        assertEquals("It adds tax.", streamed.toString());
        assertEquals("How is the total computed?", turn.userText());
        assertEquals("billing/invoice.py:22", turn.sources().get(0).fileLine());
        assertNull(turn.ragNote());

        chat.send("And the reminder?", RagChat.Options.defaults(), p -> HIT, t, null);
        List<ChatMessage> second = t.calls.get(1);
        assertEquals(4, second.size(), "system + user + assistant + new user");
        assertEquals("How is the total computed?", second.get(1).content(), "history holds the original text");
        assertEquals("It adds tax.", second.get(2).content());
        assertEquals(2, chat.history().size());
    }

    @Test
    void retrievalFailureStillChats() throws Exception {
        RagChat chat = new RagChat();
        FakeTransport t = new FakeTransport("ok");
        RagChat.Turn turn = chat.send("hello", RagChat.Options.defaults(), p -> {
            throw new IOException("server gone");
        }, t, null);
        assertEquals("hello", t.calls.get(0).get(1).content());
        assertEquals("ok", turn.answer());
        assertEquals("Project context unavailable: server gone", turn.ragNote());
        assertTrue(turn.sources().isEmpty());
    }

    @Test
    void serverReportedErrorStillChats() {
        RagChat.Prepared p = RagChat.prepare("hi", RagChat.Options.defaults(),
                q -> new RetrieveResult("", List.of(), 1, "store down"));
        assertEquals("hi", p.sentText());
        assertEquals("Project context unavailable: store down", p.ragNote());
    }

    @Test
    void degradedResultsAreUsedAndNoted() {
        RetrieveResult lexicalOnly = new RetrieveResult(HIT.context(), HIT.chunks(), 1, null,
                List.of("dense search unavailable (HTTP 500); results are lexical only"));
        RagChat.Prepared p = RagChat.prepare("hi", RagChat.Options.defaults(), q -> lexicalOnly);
        assertTrue(p.sentText().startsWith(HIT.context()), "the context is still sent");
        assertEquals("Degraded search: dense search unavailable (HTTP 500); results are lexical only", p.ragNote());
        // a protocol-1 server put the same note in `error`, with results: degraded, not failed
        RetrieveResult v1 = new RetrieveResult(HIT.context(), HIT.chunks(), 1, "results are lexical only");
        assertEquals("Degraded search: results are lexical only", RagChat.prepare("hi", RagChat.Options.defaults(), q -> v1).ragNote());
        assertTrue(RagChat.prepare("hi", RagChat.Options.defaults(), q -> v1).sentText().startsWith(HIT.context()));
    }

    @Test
    void emptyContextAndDisabledRag() {
        RagChat.Prepared none = RagChat.prepare("hi", RagChat.Options.defaults(), q -> RetrieveResult.empty());
        assertEquals("hi", none.sentText());
        assertEquals("No relevant project context found.", none.ragNote());
        RagChat.Prepared tooBig = RagChat.prepare("hi", RagChat.Options.defaults(),
                q -> new RetrieveResult("", HIT.chunks(), 1, null));
        assertEquals("hi", tooBig.sentText());
        assertEquals(1, tooBig.sources().size(), "sources are still listed");
        RagChat.Prepared off = RagChat.prepare("hi", new RagChat.Options(false, 5, 4000, 10), q -> {
            throw new AssertionError("must not retrieve");
        });
        assertEquals("hi", off.sentText());
        assertNull(off.ragNote());
        RagChat.Prepared noServer = RagChat.prepare("hi", RagChat.Options.defaults(), null);
        assertEquals("ragls is not running.", noServer.ragNote());
    }

    @Test
    void optionsIntentReachesTheRetrieveParams() throws Exception {
        List<RetrieveParams> asked = new ArrayList<>();
        RagChat.Retriever r = p -> {
            asked.add(p);
            return HIT;
        };
        RagChat.prepare("fix the tax rounding", new RagChat.Options(true, 3, 2000, 10), r);
        RagChat.prepare("fix the tax rounding", RagChat.Options.defaults().withIntent(RetrieveParams.Intent.CHANGE), r);
        RagChat.prepare("fix the tax rounding", new RagChat.Options(true, 3, 2000, 10, RetrieveParams.Intent.QUESTION), r);
        new RagChat().send("fix the tax rounding", new RagChat.Options(true, 3, 2000, 10, RetrieveParams.Intent.CHANGE),
                r, new FakeTransport("ok"), null);
        assertEquals(4, asked.size());
        assertNull(asked.get(0).intent(), "the 4-argument Options leave the intent to the server");
        assertEquals(RetrieveParams.Intent.CHANGE, asked.get(1).intent());
        assertEquals(5, asked.get(1).topK(), "withIntent keeps the other options");
        assertEquals(4000, asked.get(1).maxChars());
        assertEquals(RetrieveParams.Intent.QUESTION, asked.get(2).intent());
        assertEquals(RetrieveParams.Intent.CHANGE, asked.get(3).intent(), "send passes the intent too");
        assertEquals("change", asked.get(3).toJson().get("intent").getAsString());
        assertNull(RagChat.Options.defaults().intent());
    }

    @Test
    void chatErrorsPropagateAndKeepHistoryClean() {
        RagChat chat = new RagChat();
        ChatTransport failing = (m, d) -> {
            throw new ChatException(ChatException.Kind.HTTP_STATUS, 500, "boom", null);
        };
        ChatException e = assertThrows(ChatException.class,
                () -> chat.send("x", RagChat.Options.defaults(), q -> HIT, failing, null));
        assertEquals(500, e.status());
        assertTrue(chat.history().isEmpty());
    }

    @Test
    void historyIsCapped() throws Exception {
        RagChat chat = new RagChat();
        FakeTransport t = new FakeTransport("a");
        RagChat.Options o = new RagChat.Options(false, 5, 4000, 2);
        for (int i = 0; i < 5; i++) {
            chat.send("q" + i, o, null, t, null);
        }
        List<ChatMessage> last = t.calls.get(4);
        assertEquals(1 + 2 * 2 + 1, last.size());
        assertEquals("q2", last.get(1).content());
        chat.clear();
        assertTrue(chat.history().isEmpty());
    }
}
