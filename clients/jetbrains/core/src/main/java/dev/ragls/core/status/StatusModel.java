package dev.ragls.core.status;

import dev.ragls.core.protocol.IndexStatus;
import dev.ragls.core.protocol.ProgressEvent;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What the status bar shows, folded from server lifecycle events, {@code $/progress},
 * {@code rag/statusChanged} and {@code rag/indexStatus} answers. An index status shows as the
 * server's {@code display} (a glyph for its health, its text and tooltip lines as they are); a
 * {@code $/progress} newer than the status shows its n/N. Thread-safe; listeners run on the
 * calling thread (the IDE adapter moves them to the UI thread).
 */
public final class StatusModel {
    private ServerState serverState = ServerState.STARTING;
    private String serverDetail;
    private IndexStatus status;
    private long statusSeq = -1;
    private final Map<String, ProgressEvent> active = new LinkedHashMap<>();
    private ProgressEvent lastProgress;
    private long progressSeq = -1;
    private long seq;
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

    public void addListener(Runnable listener) {
        listeners.add(listener);
    }

    public void removeListener(Runnable listener) {
        listeners.remove(listener);
    }

    private void changed() {
        for (Runnable r : listeners) {
            r.run();
        }
    }

    public void setServerState(ServerState state, String detail) {
        synchronized (this) {
            serverState = state;
            serverDetail = detail;
            if (state != ServerState.RUNNING) {
                active.clear();
                lastProgress = null;
            }
            if (state == ServerState.STARTING) {
                status = null;
            }
        }
        changed();
    }

    public void onStatus(IndexStatus s) {
        synchronized (this) {
            status = s;
            statusSeq = ++seq;
            if (serverState == ServerState.STARTING) {
                serverState = ServerState.RUNNING;
                serverDetail = null;
            }
        }
        changed();
    }

    public void onProgress(ProgressEvent e) {
        synchronized (this) {
            if (e.isEnd()) {
                active.remove(e.token());
            } else {
                ProgressEvent prev = active.get(e.token());
                // a report has no title: keep the begin's title for the tooltip
                if (prev != null && e.title() == null && prev.title() != null) {
                    e = new ProgressEvent(e.token(), e.kind(), prev.title(), e.message(), e.percentage());
                }
                active.put(e.token(), e);
            }
            lastProgress = e;
            progressSeq = ++seq;
        }
        changed();
    }

    public synchronized ServerState serverState() {
        return serverState;
    }

    public synchronized String serverDetail() {
        return serverDetail;
    }

    public synchronized IndexStatus status() {
        return status;
    }

    public synchronized boolean isIndexing() {
        if (serverState != ServerState.RUNNING) {
            return false;
        }
        if (progressSeq > statusSeq) {
            // the latest word came from $/progress: a run is going on while any token is open
            return !active.isEmpty();
        }
        return status != null && status.isIndexing();
    }

    /** The status bar text: {@code RAG 1,234/5,000}, {@code RAG ✓}, {@code RAG ✗}, ... */
    public synchronized String text() {
        switch (serverState) {
            case DISABLED:
            case STOPPED:
                return StatusText.OFF;
            case NOT_FOUND:
            case FAILED:
            case RESTARTING:
                return StatusText.ERROR;
            case STARTING:
                return StatusText.PENDING;
            default:
                break;
        }
        if (status != null && status.isError() && statusSeq > progressSeq) {
            return StatusText.bar(status.shown());
        }
        if (isIndexing()) {
            boolean progressNewer = progressSeq > statusSeq;
            ProgressEvent p = active.isEmpty() ? null : latestActive();
            long[] files = p == null ? null : p.files();
            if (progressNewer && files != null && files[1] > 0) {
                return StatusText.counts(files[0], files[1]);
            }
            if (status != null && status.isIndexing()) {
                return StatusText.bar(status.shown());
            }
            if (files != null && files[1] > 0) {
                return StatusText.counts(files[0], files[1]);
            }
            if (files != null) {
                // "0/0 files": still discovering what to index
                return StatusText.PENDING;
            }
            if (p != null && p.percentage() != null && p.percentage() > 0) {
                return StatusText.percent(p.percentage());
            }
            return StatusText.PENDING;
        }
        if (status != null && !status.isIndexing()) {
            // the server's display (docs/clients/status.md): RAG ✓ 1,234 chunks, RAG ⚠ paused, ...
            return StatusText.bar(status.shown());
        }
        // no status yet, or a run just ended and the adapter is asking rag/indexStatus
        return StatusText.PENDING;
    }

    private ProgressEvent latestActive() {
        ProgressEvent last = null;
        for (ProgressEvent e : active.values()) {
            last = e;
        }
        return last;
    }

    /** Multi-line details for the tooltip and the popup. */
    public synchronized List<String> details() {
        List<String> out = new ArrayList<>();
        switch (serverState) {
            case DISABLED:
                out.add("RAG is disabled in Settings | Tools | ragls.");
                return out;
            case NOT_FOUND:
                out.add("ragls server not found.");
                addDetail(out);
                return out;
            case STARTING:
                out.add("ragls is starting\u2026");
                return out;
            case RESTARTING:
                out.add("ragls stopped unexpectedly; restarting.");
                addDetail(out);
                return out;
            case FAILED:
                out.add("ragls keeps crashing; automatic restarts stopped.");
                addDetail(out);
                return out;
            case STOPPED:
                out.add("ragls is stopped.");
                addDetail(out);
                return out;
            default:
                break;
        }
        if (status == null) {
            ProgressEvent p = latestActive();
            out.add(p == null ? "ragls is running." : "ragls: " + describe(p));
            return out;
        }
        ProgressEvent p = latestActive();
        if (p != null) {
            out.add("Progress: " + describe(p));
        }
        out.addAll(status.shown().tooltip());
        return out;
    }

    private void addDetail(List<String> out) {
        if (serverDetail != null && !serverDetail.isEmpty()) {
            out.add(serverDetail);
        }
    }

    private static String describe(ProgressEvent p) {
        StringBuilder sb = new StringBuilder();
        if (p.title() != null) {
            sb.append(p.title());
        }
        if (p.message() != null) {
            sb.append(sb.length() > 0 ? " \u2013 " : "").append(p.message());
        }
        if (p.percentage() != null) {
            sb.append(" (").append(p.percentage()).append("%)");
        }
        return sb.toString();
    }

    public String tooltip() {
        return String.join("\n", details());
    }
}
