package dev.ragls.core.protocol;

import com.google.gson.JsonElement;

/** Result of {@code rag/reindex}: false when a run was already in progress (it is re-run later). */
public record ReindexResult(boolean started) {
    public static ReindexResult fromJson(JsonElement json) {
        return Wire.read(json, ReindexResult.class);
    }
}
