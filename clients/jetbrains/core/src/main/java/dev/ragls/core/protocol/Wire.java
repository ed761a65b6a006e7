package dev.ragls.core.protocol;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;

import java.util.List;
import java.util.Objects;

/**
 * The rag/* payloads on the wire: records whose component names are the JSON names
 * (docs/protocol.md), read and written with Gson, the JSON library the IDE (LSP4IJ, LSP4J) uses
 * too. ProtocolSchemaTest checks every component against {@code ragls schema --protocol}.
 */
public final class Wire {
    /** Unknown fields are ignored (a newer server); missing ones are null or 0 until the records' defaults. */
    public static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

    private Wire() {
    }

    /** {@code json} as a {@code type}; null or not an object reads as {@code {}} (every field missing). */
    public static <T> T read(JsonElement json, Class<T> type) {
        JsonElement tree = json != null && json.isJsonObject() ? json : new JsonObject();
        try {
            return GSON.fromJson(tree, type);
        } catch (JsonParseException | IllegalArgumentException e) {
            throw new IllegalArgumentException("not a " + type.getSimpleName() + ": " + e.getMessage(), e);
        }
    }

    static String orEmpty(String s) {
        return s == null ? "" : s;
    }

    static <T> List<T> listOf(List<T> list) {
        return list == null ? List.of() : list.stream().filter(Objects::nonNull).toList();
    }
}
