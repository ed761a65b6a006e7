package dev.ragls.core;

import dev.ragls.core.lsp.Trees;
import dev.ragls.core.protocol.IndexStatus;
import dev.ragls.core.protocol.ProgressEvent;
import dev.ragls.core.status.ServerState;
import dev.ragls.core.status.StatusModel;
import dev.ragls.core.status.StatusText;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StatusTextTest {
    /** A status as the server sends it: the fields, and apart what the server says to show. */
    static IndexStatus status(String state, String phase, String health, String text) {
        return IndexStatus.fromJson(Trees.tree(Trees.obj("state", state, "phase", phase, "filesTotal", 13,
                "filesIndexed", 9, "chunks", 99,
                "display", Trees.obj("health", health, "text", text, "tooltip", List.of("State: " + state + " (" + phase + ")", "server line")))));
    }

    static ProgressEvent progress(String kind, String message, Integer pct) {
        return ProgressEvent.fromJson(Trees.tree(Trees.obj("token", "tok", "value",
                Trees.obj("kind", kind, "title", "ragls: indexing", "message", message, "percentage", pct))));
    }

    static StatusModel running() {
        StatusModel m = new StatusModel();
        m.setServerState(ServerState.RUNNING, null);
        return m;
    }

    @Test
    void constantsAndNumbers() {
        assertEquals("RAG \u2713", StatusText.READY);
        assertEquals("RAG \u2717", StatusText.ERROR);
        assertEquals("RAG \u2026 1,234/5,000", StatusText.counts(1234, 5000));
        assertEquals("RAG \u2026 5,000/5,000", StatusText.counts(6000, 5000), "done never exceeds total");
        assertEquals("RAG \u2026 0/0", StatusText.counts(0, 0));
        assertEquals("RAG \u2026 1,000,000/2,000,000", StatusText.counts(1_000_000, 2_000_000));
        assertEquals("RAG \u2026 42%", StatusText.percent(42));
        assertEquals("RAG \u2026 100%", StatusText.percent(140));
    }

    @Test
    void progressNumbersIgnoreTheDefaultLocale() {
        Locale saved = Locale.getDefault();
        try {
            Locale.setDefault(Locale.GERMANY);
            assertEquals("RAG \u2026 1,234/5,000", StatusText.counts(1234, 5000));
            Locale.setDefault(new Locale("fr", "FR"));
            StatusModel m = running();
            m.onProgress(progress("report", "1234/5000 files", 24));
            assertEquals("RAG \u2026 1,234/5,000", m.text());
        } finally {
            Locale.setDefault(saved);
        }
    }

    @Test
    void everyServerState() {
        StatusModel m = new StatusModel();
        assertEquals("RAG \u2026", m.text(), "a new model is starting");
        m.setServerState(ServerState.DISABLED, null);
        assertEquals("RAG off", m.text());
        assertTrue(m.tooltip().contains("disabled"));
        m.setServerState(ServerState.STOPPED, "stopped by the user");
        assertEquals("RAG off", m.text());
        m.setServerState(ServerState.NOT_FOUND, "Looked in: PATH");
        assertEquals("RAG \u2717", m.text());
        assertTrue(m.tooltip().contains("not found"));
        assertTrue(m.tooltip().contains("Looked in: PATH"));
        m.setServerState(ServerState.RESTARTING, "restarting in 4 s");
        assertEquals("RAG \u2717", m.text());
        assertTrue(m.tooltip().contains("restarting in 4 s"));
        m.setServerState(ServerState.FAILED, "exit code 1");
        assertEquals("RAG \u2717", m.text());
        m.setServerState(ServerState.STARTING, null);
        assertEquals("RAG \u2026", m.text());
        m.setServerState(ServerState.RUNNING, null);
        assertEquals("RAG \u2026", m.text(), "running without any index news yet");
    }

    @Test
    void everyHealthShowsItsGlyphAndTheServersText() {
        StatusModel m = running();
        m.onStatus(status("indexing", "starting", "indexing", "server: indexing"));
        assertEquals("RAG \u2026 server: indexing", m.text());
        assertTrue(m.isIndexing());
        m.onStatus(status("indexing", "lexical", "indexing", "9 of 13, says the server"));
        assertEquals("RAG \u2026 9 of 13, says the server", m.text());
        m.onStatus(status("ready", "idle", "warning", "99 chunks, 10 failed"));
        assertEquals("RAG \u26a0 99 chunks, 10 failed", m.text());
        assertFalse(m.isIndexing());
        assertEquals(List.of("State: ready (idle)", "server line"), m.details());
        m.onStatus(status("ready", "idle", "ok", "99 chunks"));
        assertEquals("RAG \u2713 99 chunks", m.text());
        m.onStatus(status("error", "paused", "warning", "paused"));
        assertEquals("RAG \u26a0 paused", m.text());
        m.onStatus(status("error", "error", "error", "error"));
        assertEquals("RAG \u2717 error", m.text());
    }

    @Test
    void statusBeforeRunningPromotesStarting() {
        StatusModel m = new StatusModel();
        m.setServerState(ServerState.STARTING, null);
        m.onStatus(status("ready", "idle", "ok", "99 chunks"));
        assertEquals(ServerState.RUNNING, m.serverState());
        assertEquals("RAG \u2713 99 chunks", m.text());
    }

    @Test
    void progressDrivesTheTextWhenNewer() {
        StatusModel m = running();
        m.onProgress(progress("begin", "0/13 files", 0));
        assertEquals("RAG \u2026 0/13", m.text());
        m.onProgress(progress("report", "7/13 files", 53));
        assertEquals("RAG \u2026 7/13", m.text());
        assertTrue(m.tooltip().contains("ragls: indexing"), m.tooltip());
        m.onStatus(status("indexing", "dense", "indexing", "9/13"));
        assertEquals("RAG \u2026 9/13", m.text(), "a newer statusChanged wins");
        assertTrue(m.details().containsAll(List.of("State: indexing (dense)", "server line")), m.tooltip());
        m.onProgress(progress("end", "13 files, 40 chunks", null));
        assertEquals("RAG \u2026", m.text(), "run ended; waiting for rag/indexStatus");
        m.onStatus(status("ready", "idle", "ok", "99 chunks"));
        assertEquals("RAG \u2713 99 chunks", m.text());
    }

    @Test
    void discoveringShowsPending() {
        StatusModel m = running();
        m.onProgress(progress("begin", "0/0 files", 0));
        assertEquals("RAG \u2026", m.text());
        m.onProgress(progress("report", "0/8 files", 50));
        assertEquals("RAG \u2026 0/8", m.text());
    }

    @Test
    void percentageOnlyProgress() {
        StatusModel m = running();
        m.onProgress(progress("begin", null, 0));
        assertEquals("RAG \u2026", m.text(), "0% says nothing yet");
        m.onProgress(progress("report", "discovering files", 0));
        assertEquals("RAG \u2026", m.text());
        m.onProgress(progress("report", "working", 42));
        assertEquals("RAG \u2026 42%", m.text());
        m.onProgress(progress("report", null, null));
        assertEquals("RAG \u2026", m.text());
    }

    @Test
    void watchBatchAfterReadyShowsProgressThenReady() {
        StatusModel m = running();
        m.onStatus(status("ready", "idle", "ok", "99 chunks"));
        m.onProgress(progress("begin", "0/2 files", 0));
        assertEquals("RAG \u2026 0/2", m.text());
        m.onStatus(status("ready", "idle", "ok", "99 chunks"));
        assertEquals("RAG \u2713 99 chunks", m.text(), "ready status newer than the open progress");
    }

    @Test
    void errorStatusNewerThanProgress() {
        StatusModel m = running();
        m.onProgress(progress("begin", "0/2 files", 0));
        m.onStatus(status("error", "error", "error", "error"));
        assertEquals("RAG \u2717 error", m.text());
    }

    @Test
    void leavingRunningClearsProgress() {
        StatusModel m = running();
        m.onProgress(progress("begin", "0/2 files", 0));
        m.setServerState(ServerState.RESTARTING, "restarting in 1 s");
        assertEquals("RAG \u2717", m.text());
        m.setServerState(ServerState.STARTING, null);
        m.setServerState(ServerState.RUNNING, null);
        assertEquals("RAG \u2026", m.text());
    }

    @Test
    void listenersFire() {
        StatusModel m = new StatusModel();
        AtomicInteger calls = new AtomicInteger();
        Runnable l = calls::incrementAndGet;
        m.addListener(l);
        m.setServerState(ServerState.RUNNING, null);
        m.onStatus(status("ready", "idle", "ok", "1 chunk"));
        m.onProgress(progress("begin", "0/1 files", 0));
        m.removeListener(l);
        m.onProgress(progress("end", null, null));
        assertEquals(3, calls.get());
    }
}
