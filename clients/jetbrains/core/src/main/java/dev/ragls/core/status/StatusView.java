package dev.ragls.core.status;

import dev.ragls.core.protocol.IndexStatus;

import java.util.ArrayList;
import java.util.List;

/**
 * The shared mapping from an {@link IndexStatus} to what the user sees (docs/clients/status.md):
 * a symbolic icon, a short text and the tooltip lines. The same case table
 * (tests/fixtures/status-cases.json) runs here, in VS Code's statusView.ts and in Neovim's
 * status.view.
 */
public record StatusView(String icon, String text, List<String> tooltip) {
    public static final String INDEXING = "indexing";
    public static final String READY = "ready";
    public static final String WARNING = "warning";
    public static final String ERROR = "error";

    public static StatusView of(IndexStatus s) {
        long total = s.filesTotal();
        long failed = s.filesFailed();
        String chunks = StatusText.number(s.chunks()) + " chunks";
        String icon;
        String text;
        if (s.isIndexing()) {
            icon = INDEXING;
            text = total > 0 ? StatusText.number(Math.min(s.filesDone(), total)) + "/" + StatusText.number(total) : "indexing";
        } else if (s.isError()) {
            boolean soft = "paused".equals(s.phase()) || "waiting".equals(s.phase());
            icon = soft ? WARNING : ERROR;
            text = soft ? s.phase() : "error";
        } else {
            icon = failed > 0 || !s.warnings().isEmpty() ? WARNING : READY;
            text = failed > 0 ? chunks + ", " + StatusText.number(failed) + " failed" : chunks;
        }
        return new StatusView(icon, text, tooltip(s));
    }

    private static boolean present(String v) {
        return v != null && !v.isEmpty();
    }

    private static List<String> tooltip(IndexStatus s) {
        List<String> out = new ArrayList<>();
        out.add("State: " + s.state() + " (" + s.phase() + ")");
        if (present(s.message())) {
            out.add(s.message());
        }
        String files = "Files: " + StatusText.number(s.filesIndexed()) + "/" + StatusText.number(s.filesTotal()) + " indexed";
        if (s.filesFailed() > 0) {
            files += ", " + StatusText.number(s.filesFailed()) + " failed";
        }
        if (s.filesSkipped() > 0) {
            files += ", " + StatusText.number(s.filesSkipped()) + " skipped";
        }
        out.add(files);
        out.add("Chunks: " + StatusText.number(s.chunks()));
        if (s.isMultiRoot()) {
            for (IndexStatus.FolderStatus f : s.folders()) {
                out.add(folderLine(f));
            }
        }
        IndexStatus.Embedder e = s.embedder();
        if (present(e.provider()) || present(e.model())) {
            out.add("Embedder: " + e.provider() + " / " + e.model() + (e.dimension() > 0 ? ", " + e.dimension() + "-d" : ""));
        }
        if (present(s.store().kind())) {
            out.add("Store: " + s.store().kind() + (present(s.store().location()) ? " at " + s.store().location() : ""));
        }
        if (present(s.lastIndexedAt())) {
            out.add("Last indexed: " + s.lastIndexedAt());
        }
        for (String w : s.warnings()) {
            out.add("Warning: " + w);
        }
        if (!s.errors().isEmpty()) {
            IndexStatus.IndexError last = s.errors().get(s.errors().size() - 1);
            out.add("Errors: " + s.errors().size() + "; last: " + last.path() + ": " + last.message());
        }
        if (present(s.version())) {
            out.add("Server: ragls " + s.version());
        }
        return List.copyOf(out);
    }

    /** One folder of a multi-root workspace (docs/clients/status.md, tooltip line 5). */
    public static String folderLine(IndexStatus.FolderStatus f) {
        if (present(f.nestedIn())) {
            return "Folder " + f.name() + ": inside " + f.nestedIn();
        }
        String line = "Folder " + f.name() + ": " + f.state() + " (" + f.phase() + "), "
                + StatusText.number(f.filesIndexed()) + "/" + StatusText.number(f.filesTotal()) + " files";
        if (f.filesFailed() > 0) {
            line += ", " + StatusText.number(f.filesFailed()) + " failed";
        }
        line += ", " + StatusText.number(f.chunks()) + " chunks";
        if (present(f.message())) {
            line += "; " + f.message();
        }
        return line;
    }

    /** The status-bar glyph of an icon (docs/clients/status.md). */
    public static String glyph(String icon) {
        switch (icon) {
            case READY:
                return "\u2713";  // ✓
            case WARNING:
                return "\u26a0";  // ⚠
            case ERROR:
                return "\u2717";  // ✗
            default:
                return "\u2026";  // …
        }
    }

    /** {@code RAG ✓ 1,234 chunks}. */
    public String barText() {
        return StatusText.PREFIX + " " + glyph(icon) + " " + text;
    }
}
