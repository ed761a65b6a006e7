package dev.ragls.core.protocol;

import dev.ragls.core.json.Json;

import java.util.Map;

/** Result of {@code rag/reindex}: false when a run was already in progress (it is re-run later). */
public record ReindexResult(boolean started) {
    public static ReindexResult fromJson(Map<String, Object> m) {
        return new ReindexResult(Json.getBoolean(m, "started", false));
    }
}
