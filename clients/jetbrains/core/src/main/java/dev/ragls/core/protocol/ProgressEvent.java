package dev.ragls.core.protocol;

import dev.ragls.core.json.Json;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One {@code $/progress} notification carrying a work-done progress value
 * ({@code begin}/{@code report}/{@code end}). ragls puts {@code "n/N files"} in the message.
 */
public record ProgressEvent(String token, String kind, String title, String message, Integer percentage) {

    private static final Pattern FILES = Pattern.compile("(\\d[\\d,]*)\\s*/\\s*(\\d[\\d,]*)\\s+files");

    public static ProgressEvent fromJson(Map<String, Object> params) {
        Object token = params.get("token");
        Map<String, Object> v = Json.getObject(params, "value");
        Object pct = v.get("percentage");
        return new ProgressEvent(
                token == null ? "" : (token instanceof Number ? String.valueOf(((Number) token).longValue()) : token.toString()),
                Json.getString(v, "kind", ""),
                Json.getString(v, "title", null),
                Json.getString(v, "message", null),
                pct instanceof Number ? ((Number) pct).intValue() : null);
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
