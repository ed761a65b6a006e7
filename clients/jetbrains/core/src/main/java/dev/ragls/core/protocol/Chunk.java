package dev.ragls.core.protocol;

import dev.ragls.core.json.Json;

import java.util.Map;

/**
 * One retrieved chunk ({@code Chunk} in docs/protocol.md). Lines in {@code range} are 0-based and
 * the end is exclusive; {@link #firstLine()} and {@link #lastLine()} are 1-based and inclusive,
 * as shown to people and used in {@code file:line} links.
 */
public record Chunk(String uri, String path, int startLine, int startCharacter, int endLine,
                    int endCharacter, String symbol, String kind, String language, double score,
                    String content) {

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
                Json.getString(m, "content", ""));
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
        return path + ":" + firstLine();
    }

    /** {@code billing/invoice.py:22-25 Invoice.compute_total}. */
    public String label() {
        String lines = lastLine() > firstLine() ? firstLine() + "-" + lastLine() : String.valueOf(firstLine());
        return path + ":" + lines + (symbol == null || symbol.isEmpty() ? "" : " " + symbol);
    }
}
