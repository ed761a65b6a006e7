package dev.ragls.core.protocol;

import dev.ragls.core.json.Json;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Result of {@code rag/retrieve}. {@code context} is "" when nothing fits or nothing is relevant.
 * {@code error}: no retrieval (nothing could be searched). {@code warnings} (protocol 2): degraded,
 * real results from less than the full search, e.g. lexical only while the embedder is down.
 */
public record RetrieveResult(String context, List<Chunk> chunks, double tookMs, String error, List<String> warnings) {

    public RetrieveResult(String context, List<Chunk> chunks, double tookMs, String error) {
        this(context, chunks, tookMs, error, List.of());
    }

    public static RetrieveResult fromJson(Map<String, Object> m) {
        List<Chunk> chunks = new ArrayList<>();
        for (Object o : Json.getList(m, "chunks")) {
            chunks.add(Chunk.fromJson(Json.asObject(o)));
        }
        return new RetrieveResult(
                Json.getString(m, "context", ""),
                List.copyOf(chunks),
                Json.getDouble(m, "tookMs", 0.0),
                Json.getString(m, "error", null),
                strings(Json.getList(m, "warnings")));
    }

    public static RetrieveResult empty() {
        return new RetrieveResult("", List.of(), 0.0, null);
    }

    static List<String> strings(List<Object> list) {
        List<String> out = new ArrayList<>();
        for (Object o : list) {
            if (o instanceof String str) {
                out.add(str);
            }
        }
        return List.copyOf(out);
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

    public boolean hasContext() {
        return context != null && !context.isEmpty();
    }
}
