package dev.ragls.core.protocol;

import dev.ragls.core.json.Json;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Result of {@code rag/retrieve}. {@code context} is "" when nothing fits or nothing is relevant. */
public record RetrieveResult(String context, List<Chunk> chunks, double tookMs, String error) {

    public static RetrieveResult fromJson(Map<String, Object> m) {
        List<Chunk> chunks = new ArrayList<>();
        for (Object o : Json.getList(m, "chunks")) {
            chunks.add(Chunk.fromJson(Json.asObject(o)));
        }
        return new RetrieveResult(
                Json.getString(m, "context", ""),
                List.copyOf(chunks),
                Json.getDouble(m, "tookMs", 0.0),
                Json.getString(m, "error", null));
    }

    public static RetrieveResult empty() {
        return new RetrieveResult("", List.of(), 0.0, null);
    }

    public boolean hasContext() {
        return context != null && !context.isEmpty();
    }
}
