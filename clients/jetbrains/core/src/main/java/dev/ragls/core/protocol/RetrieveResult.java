package dev.ragls.core.protocol;

import com.google.gson.JsonElement;

import java.util.List;

import static dev.ragls.core.protocol.Wire.listOf;
import static dev.ragls.core.protocol.Wire.orEmpty;

/**
 * Result of {@code rag/retrieve}. {@code context} is "" when nothing fits or nothing is relevant.
 * {@code error}: no retrieval (nothing could be searched). {@code warnings} (protocol 2): degraded,
 * real results from less than the full search, e.g. lexical only while the embedder is down.
 * {@code resultId} (protocol 6): the answer's id for {@code rag/feedback}; null when rating is off,
 * nothing could be searched, or the server is older.
 */
public record RetrieveResult(String context, List<Chunk> chunks, double tookMs, String error, List<String> warnings,
                             String resultId) {

    public RetrieveResult {
        context = orEmpty(context);
        chunks = listOf(chunks);
        warnings = listOf(warnings);
    }

    public RetrieveResult(String context, List<Chunk> chunks, double tookMs, String error, List<String> warnings) {
        this(context, chunks, tookMs, error, warnings, null);
    }

    public RetrieveResult(String context, List<Chunk> chunks, double tookMs, String error) {
        this(context, chunks, tookMs, error, List.of(), null);
    }

    public static RetrieveResult fromJson(JsonElement json) {
        return Wire.read(json, RetrieveResult.class);
    }

    public static RetrieveResult empty() {
        return new RetrieveResult("", List.of(), 0.0, null);
    }

    /** "No retrieval": an error without results (a protocol-1 server's error with chunks is degraded). */
    public String failure() {
        return error != null && !error.isEmpty() && chunks.isEmpty() ? error : null;
    }

    /** Why the results are partial ("Degraded search: ..."), or null. */
    public String degradedNote() {
        List<String> w = warnings;
        if (w.isEmpty() && error != null && !error.isEmpty() && !chunks.isEmpty()) {
            w = List.of(error);
        }
        return w.isEmpty() ? null : "Degraded search: " + String.join("; ", w);
    }

    /** Whether this answer can be rated ({@code rag/feedback}): it carries a {@code resultId}. */
    public boolean rateable() {
        return resultId != null && !resultId.isEmpty();
    }

    public boolean hasContext() {
        return context != null && !context.isEmpty();
    }
}
