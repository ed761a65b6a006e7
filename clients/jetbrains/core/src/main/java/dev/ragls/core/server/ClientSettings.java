package dev.ragls.core.server;

import com.google.gson.JsonObject;

/**
 * The plugin's settings that the server cares about, and their wire form. Names, defaults and
 * bounds are the server's (`ragls schema --flat`); SettingsSchemaTest fails on any difference. The same object is
 * sent as {@code initializationOptions} and as the {@code ragls} section of
 * {@code workspace/configuration} (keys as in docs/configuration.md: camelCase, nested).
 */
public record ClientSettings(boolean ragEnabled, int topK, int maxChars, boolean autoIndex) {
    public static final int MIN_TOP_K = 1;
    public static final int MAX_TOP_K = 100;
    public static final int MIN_MAX_CHARS = 0;
    public static final int MAX_MAX_CHARS = 200_000;
    public static final int DEFAULT_TOP_K = 20;
    public static final int DEFAULT_MAX_CHARS = 4000;
    public static final boolean DEFAULT_AUTO_INDEX = true;

    public ClientSettings {
        topK = Math.max(MIN_TOP_K, Math.min(MAX_TOP_K, topK));
        maxChars = Math.max(MIN_MAX_CHARS, Math.min(MAX_MAX_CHARS, maxChars));
    }

    public static ClientSettings defaults() {
        return new ClientSettings(true, DEFAULT_TOP_K, DEFAULT_MAX_CHARS, DEFAULT_AUTO_INDEX);
    }

    public JsonObject toServerSettings() {
        JsonObject retrieval = new JsonObject();
        retrieval.addProperty("topK", topK);
        retrieval.addProperty("maxChars", maxChars);
        JsonObject indexing = new JsonObject();
        indexing.addProperty("autoIndex", autoIndex);
        JsonObject settings = new JsonObject();
        settings.add("retrieval", retrieval);
        settings.add("indexing", indexing);
        return settings;
    }
}
