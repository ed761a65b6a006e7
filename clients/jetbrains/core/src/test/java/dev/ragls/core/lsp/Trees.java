package dev.ragls.core.lsp;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import com.google.gson.ToNumberPolicy;
import com.google.gson.reflect.TypeToken;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON as plain Java trees for the tests' own JSON-RPC client and fixtures: objects are ordered
 * maps, arrays lists, integers {@code Long}, other numbers {@code Double}. Parsing and writing are
 * Gson's; the rest are null-safe accessors.
 */
public final class Trees {
    private static final Gson GSON = new GsonBuilder()
            .serializeNulls()
            .disableHtmlEscaping()
            .setObjectToNumberStrategy(ToNumberPolicy.LONG_OR_DOUBLE)
            .create();

    private Trees() {
    }

    public static Object parse(String text) {
        return GSON.fromJson(text, Object.class);
    }

    public static Map<String, Object> parseObject(String text) {
        return asObject(parse(text));
    }

    /** {@code text} as a Gson tree (what the core's protocol records read). */
    public static JsonElement parseTree(String text) {
        return JsonParser.parseString(text);
    }

    /** A plain tree (or any value) as a Gson tree. */
    public static JsonElement tree(Object value) {
        return GSON.toJsonTree(value);
    }

    /** A Gson tree as a plain one. */
    public static Map<String, Object> toMap(JsonElement tree) {
        return asObject(GSON.fromJson(tree, new TypeToken<Object>() { }.getType()));
    }

    public static String write(Object value) {
        return GSON.toJson(value);
    }

    @SuppressWarnings("unchecked")
    public static Map<String, Object> asObject(Object v) {
        return v instanceof Map ? (Map<String, Object>) v : Map.of();
    }

    @SuppressWarnings("unchecked")
    public static List<Object> asList(Object v) {
        return v instanceof List ? (List<Object>) v : List.of();
    }

    public static Map<String, Object> getObject(Map<String, Object> m, String key) {
        return asObject(m.get(key));
    }

    public static List<Object> getList(Map<String, Object> m, String key) {
        return asList(m.get(key));
    }

    public static String getString(Map<String, Object> m, String key, String dflt) {
        return m.get(key) instanceof String s ? s : dflt;
    }

    public static long getLong(Map<String, Object> m, String key, long dflt) {
        return m.get(key) instanceof Number n ? n.longValue() : dflt;
    }

    public static int getInt(Map<String, Object> m, String key, int dflt) {
        return m.get(key) instanceof Number n ? n.intValue() : dflt;
    }

    public static boolean getBoolean(Map<String, Object> m, String key, boolean dflt) {
        return m.get(key) instanceof Boolean b ? b : dflt;
    }

    /** An ordered map of alternating keys and values (null values kept). */
    public static Map<String, Object> obj(Object... keyValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < keyValues.length; i += 2) {
            m.put((String) keyValues[i], keyValues[i + 1]);
        }
        return m;
    }
}
