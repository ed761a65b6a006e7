package dev.ragls.core.chat;

/**
 * Incremental server-sent-events parser fed one line at a time (line terminators removed).
 * Returns the event's data when a blank line completes it; comments and fields other than
 * {@code data} are ignored, multi-line data is joined with {@code \n}.
 */
public final class SseParser {
    private StringBuilder data;

    /** Feeds one line; returns the completed event's data, or null. */
    public String feed(String line) {
        if (line.isEmpty()) {
            return flush();
        }
        if (line.startsWith(":")) {
            return null;
        }
        String field = line;
        String value = "";
        int colon = line.indexOf(':');
        if (colon >= 0) {
            field = line.substring(0, colon);
            value = line.substring(colon + 1);
            if (value.startsWith(" ")) {
                value = value.substring(1);
            }
        }
        if (field.equals("data")) {
            if (data == null) {
                data = new StringBuilder(value);
            } else {
                data.append('\n').append(value);
            }
        }
        return null;
    }

    /** Completes a pending event (end of stream without a final blank line). */
    public String flush() {
        if (data == null) {
            return null;
        }
        String out = data.toString();
        data = null;
        return out;
    }
}
