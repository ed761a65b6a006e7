package dev.ragls.core.protocol;

import com.google.gson.JsonElement;

import java.util.List;
import java.util.Map;

import static dev.ragls.core.protocol.Wire.listOf;
import static dev.ragls.core.protocol.Wire.orEmpty;

/**
 * Result of {@code rag/indexStatus} and params of {@code rag/statusChanged}. The counters are
 * totals over all workspace folders; {@code folders} (protocol 3, empty from older servers) has
 * one entry per folder; {@code display} is what to show for it, decided by the server.
 */
public record IndexStatus(String state, String phase, long filesTotal, long filesIndexed,
                          long filesFailed, long filesSkipped, Map<String, Long> skippedByReason,
                          long chunks, Progress lexical, Progress dense, String lastIndexedAt,
                          Embedder embedder, Store store, Cache cache, List<IndexError> errors,
                          String workspace, String version, String message, List<String> warnings,
                          long protocolVersion, boolean watching, List<FolderStatus> folders,
                          StatusDisplay display) {

    public static final String INDEXING = "indexing";
    public static final String READY = "ready";
    public static final String ERROR = "error";

    /** Fields an older server did not send read as their protocol defaults. */
    public IndexStatus {
        state = orEmpty(state);
        phase = orEmpty(phase);
        skippedByReason = skippedByReason == null ? Map.of() : Map.copyOf(skippedByReason);
        lexical = lexical == null ? new Progress(0, 0) : lexical;
        dense = dense == null ? new Progress(0, 0) : dense;
        embedder = embedder == null ? new Embedder("", "", 0) : embedder;
        store = store == null ? new Store("", "") : store;
        cache = cache == null ? new Cache(0, 0, 0.0) : cache;
        errors = listOf(errors);
        workspace = orEmpty(workspace);
        version = orEmpty(version);
        warnings = listOf(warnings);
        protocolVersion = protocolVersion == 0 ? 1 : protocolVersion;
        folders = listOf(folders);
    }

    public record Progress(long done, long total) {
    }

    public record Embedder(String provider, String model, long dimension) {
        public Embedder {
            provider = orEmpty(provider);
            model = orEmpty(model);
        }
    }

    public record Store(String kind, String location) {
        public Store {
            kind = orEmpty(kind);
            location = orEmpty(location);
        }
    }

    public record Cache(long hits, long misses, double hitRate) {
    }

    public record IndexError(String path, String message, String time) {
        public IndexError {
            path = orEmpty(path);
            message = orEmpty(message);
            time = orEmpty(time);
        }
    }

    /** One workspace folder (protocol 3); {@code nestedIn} names the open folder that covers it. */
    public record FolderStatus(String name, String uri, String path, String state, String phase,
                               long filesTotal, long filesIndexed, long filesFailed, long chunks,
                               List<IndexError> errors, String message, String nestedIn) {
        public FolderStatus {
            name = orEmpty(name);
            uri = orEmpty(uri);
            path = orEmpty(path);
            state = orEmpty(state);
            phase = orEmpty(phase);
            errors = listOf(errors);
        }
    }

    public static IndexStatus fromJson(JsonElement json) {
        return Wire.read(json, IndexStatus.class);
    }

    /** What to show: the server's {@code display}; from a server older than it, the state as it is. */
    public StatusDisplay shown() {
        if (display != null) {
            return display;
        }
        String health = READY.equals(state) ? StatusDisplay.OK : state;
        return new StatusDisplay(health, state, List.of("State: " + state + " (" + phase + ")"));
    }

    /** 2+ folders: results are labelled {@code folder/path}. */
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
}
