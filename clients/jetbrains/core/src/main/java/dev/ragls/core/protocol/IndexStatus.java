package dev.ragls.core.protocol;

import dev.ragls.core.json.Json;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Result of {@code rag/indexStatus} and params of {@code rag/statusChanged}. The counters are
 * totals over all workspace folders; {@code folders} (protocol 3, empty from older servers) has
 * one entry per folder.
 */
public record IndexStatus(String state, String phase, long filesTotal, long filesIndexed,
                          long filesFailed, long filesSkipped, Map<String, Long> skippedByReason,
                          long chunks, Progress lexical, Progress dense, String lastIndexedAt,
                          Embedder embedder, Store store, Cache cache, List<IndexError> errors,
                          String workspace, String version, String message, List<String> warnings,
                          long protocolVersion, boolean watching, List<FolderStatus> folders) {

    public static final String INDEXING = "indexing";
    public static final String READY = "ready";
    public static final String ERROR = "error";

    public record Progress(long done, long total) {
        static Progress fromJson(Map<String, Object> m) {
            return new Progress(Json.getLong(m, "done", 0), Json.getLong(m, "total", 0));
        }
    }

    public record Embedder(String provider, String model, long dimension) {
        static Embedder fromJson(Map<String, Object> m) {
            return new Embedder(Json.getString(m, "provider", ""), Json.getString(m, "model", ""),
                    Json.getLong(m, "dimension", 0));
        }
    }

    public record Store(String kind, String location) {
        static Store fromJson(Map<String, Object> m) {
            return new Store(Json.getString(m, "kind", ""), Json.getString(m, "location", ""));
        }
    }

    public record Cache(long hits, long misses, double hitRate) {
        static Cache fromJson(Map<String, Object> m) {
            return new Cache(Json.getLong(m, "hits", 0), Json.getLong(m, "misses", 0),
                    Json.getDouble(m, "hitRate", 0.0));
        }
    }

    public record IndexError(String path, String message, String time) {
        static IndexError fromJson(Map<String, Object> m) {
            return new IndexError(Json.getString(m, "path", ""), Json.getString(m, "message", ""),
                    Json.getString(m, "time", ""));
        }
    }

    /** One workspace folder (protocol 3); {@code nestedIn} names the open folder that covers it. */
    public record FolderStatus(String name, String uri, String path, String state, String phase,
                               long filesTotal, long filesIndexed, long filesFailed, long chunks,
                               List<IndexError> errors, String message, String nestedIn) {
        static FolderStatus fromJson(Map<String, Object> m) {
            return new FolderStatus(
                    Json.getString(m, "name", ""),
                    Json.getString(m, "uri", ""),
                    Json.getString(m, "path", ""),
                    Json.getString(m, "state", ""),
                    Json.getString(m, "phase", ""),
                    Json.getLong(m, "filesTotal", 0),
                    Json.getLong(m, "filesIndexed", 0),
                    Json.getLong(m, "filesFailed", 0),
                    Json.getLong(m, "chunks", 0),
                    parseErrors(m),
                    Json.getString(m, "message", null),
                    Json.getString(m, "nestedIn", null));
        }
    }

    private static List<IndexError> parseErrors(Map<String, Object> m) {
        List<IndexError> errors = new ArrayList<>();
        for (Object o : Json.getList(m, "errors")) {
            errors.add(IndexError.fromJson(Json.asObject(o)));
        }
        return List.copyOf(errors);
    }

    public static IndexStatus fromJson(Map<String, Object> m) {
        Map<String, Long> skipped = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : Json.getObject(m, "skippedByReason").entrySet()) {
            if (e.getValue() instanceof Number) {
                skipped.put(e.getKey(), ((Number) e.getValue()).longValue());
            }
        }
        List<FolderStatus> folders = new ArrayList<>();
        for (Object o : Json.getList(m, "folders")) {
            folders.add(FolderStatus.fromJson(Json.asObject(o)));
        }
        return new IndexStatus(
                Json.getString(m, "state", ""),
                Json.getString(m, "phase", ""),
                Json.getLong(m, "filesTotal", 0),
                Json.getLong(m, "filesIndexed", 0),
                Json.getLong(m, "filesFailed", 0),
                Json.getLong(m, "filesSkipped", 0),
                Map.copyOf(skipped),
                Json.getLong(m, "chunks", 0),
                Progress.fromJson(Json.getObject(m, "lexical")),
                Progress.fromJson(Json.getObject(m, "dense")),
                Json.getString(m, "lastIndexedAt", null),
                Embedder.fromJson(Json.getObject(m, "embedder")),
                Store.fromJson(Json.getObject(m, "store")),
                Cache.fromJson(Json.getObject(m, "cache")),
                parseErrors(m),
                Json.getString(m, "workspace", ""),
                Json.getString(m, "version", ""),
                Json.getString(m, "message", null),
                RetrieveResult.strings(Json.getList(m, "warnings")),
                Json.getLong(m, "protocolVersion", 1),
                Json.getBoolean(m, "watching", false),
                List.copyOf(folders));
    }

    /** 2+ folders: results are labelled {@code folder/path} and the tooltip lists each folder. */
    public boolean isMultiRoot() {
        return folders.size() >= 2;
    }

    public boolean isReady() {
        return READY.equals(state);
    }

    public boolean isIndexing() {
        return INDEXING.equals(state);
    }

    public boolean isError() {
        return ERROR.equals(state);
    }

    /** Files the current run is done with (indexed or failed). */
    public long filesDone() {
        return filesIndexed + filesFailed;
    }
}
