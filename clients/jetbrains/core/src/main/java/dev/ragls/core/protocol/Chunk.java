package dev.ragls.core.protocol;

import dev.ragls.core.json.Json;

import java.util.Map;

/**
 * One retrieved chunk ({@code Chunk} in docs/protocol.md). Lines in {@code range} are 0-based and
 * the end is exclusive; {@link #firstLine()} and {@link #lastLine()} are 1-based and inclusive,
 * as shown to people and used in {@code file:line} links. {@code folder} and {@code folderUri}
 * (protocol 3) name the workspace folder {@code path} is relative to; null from older servers.
 */
public record Chunk(String uri, String path, int startLine, int startCharacter, int endLine,
                    int endCharacter, String symbol, String kind, String language, double score,
                    String content, String folder, String folderUri) {

    public static Chunk fromJson(Map<String, Object> m) {
        Map<String, Object> range = Json.getObject(m, "range");
        Map<String, Object> start = Json.getObject(range, "start");
        Map<String, Object> end = Json.getObject(range, "end");
        return new Chunk(
                Json.getString(m, "uri", ""),
                Json.getString(m, "path", ""),
                Json.getInt(start, "line", 0),
                Json.getInt(start, "character", 0),
                Json.getInt(end, "line", Json.getInt(start, "line", 0) + 1),
                Json.getInt(end, "character", 0),
                Json.getString(m, "symbol", null),
                Json.getString(m, "kind", ""),
                Json.getString(m, "language", ""),
                Json.getDouble(m, "score", 0.0),
                Json.getString(m, "content", ""),
                Json.getString(m, "folder", null),
                Json.getString(m, "folderUri", null));
    }

    /**
     * The path as the user reads it: {@code folder/path} in a workspace of 2+ folders when the
     * server names the chunk's folder, the folder-relative {@code path} otherwise.
     */
    public String displayPath(boolean multiRoot) {
        return multiRoot && folder != null && !folder.isEmpty() ? folder + "/" + path : path;
    }

    /** 1-based first line. */
    public int firstLine() {
        return startLine + 1;
    }

    /** 1-based, inclusive last line (an exclusive end at character 0 ends on the line before). */
    public int lastLine() {
        int last = endCharacter == 0 ? endLine : endLine + 1;
        return Math.max(last, firstLine());
    }

    /** {@code billing/invoice.py:22}, the form used for clickable source links. */
    public String fileLine() {
        return fileLine(false);
    }

    /** {@code api/billing/invoice.py:22} in a multi-root workspace (see {@link #displayPath}). */
    public String fileLine(boolean multiRoot) {
        return displayPath(multiRoot) + ":" + firstLine();
    }

    /** {@code billing/invoice.py:22-25 Invoice.compute_total}. */
    public String label() {
        return label(false);
    }

    /** {@code api/billing/invoice.py:22-25 Invoice.compute_total} in a multi-root workspace. */
    public String label(boolean multiRoot) {
        String lines = lastLine() > firstLine() ? firstLine() + "-" + lastLine() : String.valueOf(firstLine());
        return displayPath(multiRoot) + ":" + lines + (symbol == null || symbol.isEmpty() ? "" : " " + symbol);
    }
}
