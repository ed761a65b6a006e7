package dev.ragls.core.protocol;

import com.google.gson.JsonElement;

import java.util.List;

import static dev.ragls.core.protocol.Wire.listOf;

/**
 * Result of {@code rag/feedback}: {@code stored} false (with {@code message} saying why) when
 * rating is off or the file could not be written; {@code folders} the workspace folders whose
 * files got the rating.
 */
public record FeedbackResult(boolean stored, List<String> folders, String message) {
    public FeedbackResult {
        folders = listOf(folders);
    }

    public static FeedbackResult fromJson(JsonElement json) {
        return Wire.read(json, FeedbackResult.class);
    }

    /** One line for a status bar: "Rating stored (polyglot)." or "Rating not stored: why". */
    public String summary() {
        if (stored) {
            return "Rating stored" + (folders.isEmpty() ? "" : " (" + String.join(", ", folders) + ")") + ".";
        }
        return "Rating not stored" + (message == null || message.isBlank() ? "." : ": " + message);
    }
}
