package dev.ragls.core.protocol;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.annotations.SerializedName;

import java.util.List;

/**
 * Params of {@code rag/feedback} (protocol 6): a rating of one answer, named by the
 * {@code resultId} of a {@code rag/retrieve} result of the same server process. {@code relevant}:
 * where the right code was, when the user knows it (at most 50 places); {@code comment}: why.
 * Null and empty fields are left out. The server stores the rating (docs/feedback.md); the client
 * only sends it.
 */
public record FeedbackParams(String resultId, Rating rating, List<Place> relevant, String comment) {
    public static final int MAX_RELEVANT = 50;
    public static final int MAX_COMMENT_CHARS = 4000;

    /** The answer helped ({@code "up"}), or did not ({@code "down"}). */
    public enum Rating {
        @SerializedName("up")
        UP("up"),
        @SerializedName("down")
        DOWN("down");

        private final String wire;

        Rating(String wire) {
            this.wire = wire;
        }

        /** The value sent on the wire. */
        public String wire() {
            return wire;
        }
    }

    /**
     * A place of the right code: {@code path} workspace-relative ({@code folder/path} with several
     * folders), absolute, or a {@code file://} URI; {@code line} 1-based.
     */
    public record Place(String path, int line) {
        public Place {
            if (path == null || path.isBlank()) {
                throw new IllegalArgumentException("path must not be empty");
            }
            if (line < 1) {
                throw new IllegalArgumentException("line is 1-based: " + line);
            }
        }
    }

    public FeedbackParams {
        if (resultId == null || resultId.isBlank()) {
            throw new IllegalArgumentException("resultId must not be empty (the answer carried none: rating is off)");
        }
        if (rating == null) {
            throw new IllegalArgumentException("rating must be UP or DOWN");
        }
        relevant = relevant == null ? List.of() : List.copyOf(relevant.subList(0, Math.min(relevant.size(), MAX_RELEVANT)));
        if (comment != null) {
            comment = comment.strip();
            if (comment.isEmpty()) {
                comment = null;
            } else if (comment.length() > MAX_COMMENT_CHARS) {
                comment = comment.substring(0, MAX_COMMENT_CHARS);
            }
        }
    }

    /** A plain thumbs up or down. */
    public static FeedbackParams of(String resultId, Rating rating) {
        return new FeedbackParams(resultId, rating, null, null);
    }

    /** The params as sent: {@code relevant} and {@code comment} only when given. */
    public JsonObject toJson() {
        JsonObject m = new JsonObject();
        m.addProperty("resultId", resultId);
        m.addProperty("rating", rating.wire());
        if (!relevant.isEmpty()) {
            JsonArray a = new JsonArray();
            for (Place p : relevant) {
                JsonObject o = new JsonObject();
                o.addProperty("path", p.path());
                o.addProperty("line", p.line());
                a.add(o);
            }
            m.add("relevant", a);
        }
        if (comment != null) {
            m.addProperty("comment", comment);
        }
        return m;
    }
}
