package dev.ragls.core.protocol;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One {@code $/progress} notification carrying a work-done progress value
 * ({@code begin}/{@code report}/{@code end}). ragls puts {@code "n/N files"} in the message.
 */
public record ProgressEvent(String token, String kind, String title, String message, Integer percentage) {

    private static final Pattern FILES = Pattern.compile("(\\d[\\d,]*)\\s*/\\s*(\\d[\\d,]*)\\s+files");

    /** The params of a {@code $/progress} notification ({@code {token, value}}). */
    public static ProgressEvent fromJson(JsonElement json) {
        JsonObject params = json != null && json.isJsonObject() ? json.getAsJsonObject() : new JsonObject();
        JsonElement v = params.get("value");
        JsonObject value = v != null && v.isJsonObject() ? v.getAsJsonObject() : new JsonObject();
        JsonPrimitive pct = primitive(value, "percentage");
        return new ProgressEvent(
                token(primitive(params, "token")),
                string(value, "kind", ""),
                string(value, "title", null),
                string(value, "message", null),
                pct != null && pct.isNumber() ? pct.getAsInt() : null);
    }

    private static JsonPrimitive primitive(JsonObject o, String key) {
        JsonElement e = o.get(key);
        return e != null && e.isJsonPrimitive() ? e.getAsJsonPrimitive() : null;
    }

    private static String token(JsonPrimitive t) {
        if (t == null) {
            return "";
        }
        return t.isNumber() ? String.valueOf(t.getAsLong()) : t.getAsString();
    }

    private static String string(JsonObject o, String key, String dflt) {
        JsonPrimitive p = primitive(o, key);
        return p != null && p.isString() ? p.getAsString() : dflt;
    }

    public boolean isBegin() {
        return "begin".equals(kind);
    }

    public boolean isReport() {
        return "report".equals(kind);
    }

    public boolean isEnd() {
        return "end".equals(kind);
    }

    /** {@code [done, total]} parsed from a {@code "n/N files"} message, or null. */
    public long[] files() {
        if (message == null) {
            return null;
        }
        Matcher m = FILES.matcher(message);
        if (!m.find()) {
            return null;
        }
        return new long[]{Long.parseLong(m.group(1).replace(",", "")), Long.parseLong(m.group(2).replace(",", ""))};
    }
}
