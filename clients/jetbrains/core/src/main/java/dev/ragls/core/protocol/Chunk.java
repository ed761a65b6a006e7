package dev.ragls.core.protocol;

import com.google.gson.JsonElement;

import static dev.ragls.core.protocol.Wire.orEmpty;

/**
 * One retrieved chunk ({@code Chunk} in docs/protocol.md). Lines in {@code range} are 0-based and
 * the end is exclusive; {@link #firstLine()} and {@link #lastLine()} are 1-based and inclusive,
 * as shown to people and used in {@code file:line} links. {@code folder} and {@code folderUri}
 * (protocol 3) name the workspace folder {@code path} is relative to; null from older servers.
 */
public record Chunk(String uri, String path, Range range, String symbol, String kind, String language,
                    double score, String content, String folder, String folderUri) {

    public record Position(int line, int character) {
    }

    /** An LSP range; a missing end is the line after the start. */
    public record Range(Position start, Position end) {
        public Range {
            start = start == null ? new Position(0, 0) : start;
            end = end == null ? new Position(start.line() + 1, 0) : end;
        }
    }

    public Chunk {
        uri = orEmpty(uri);
        path = orEmpty(path);
        range = range == null ? new Range(null, null) : range;
        kind = orEmpty(kind);
        language = orEmpty(language);
        content = orEmpty(content);
    }

    public static Chunk fromJson(JsonElement json) {
        return Wire.read(json, Chunk.class);
    }

    /** 0-based first line. */
    public int startLine() {
        return range.start().line();
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
        return startLine() + 1;
    }

    /** 1-based, inclusive last line (an exclusive end at character 0 ends on the line before). */
    public int lastLine() {
        Position end = range.end();
        int last = end.character() == 0 ? end.line() : end.line() + 1;
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
