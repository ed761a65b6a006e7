package dev.ragls.core.protocol;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;

import java.util.List;

/**
 * Params of {@code rag/retrieve}. Null fields are left out so the server's defaults apply.
 * {@code folders} (protocol 3): search only these workspace folders, by name or URI.
 * {@code intent} (protocol 4): what the query is; {@link Intent#CHANGE} is written as
 * {@code "intent":"change"}, null or {@link Intent#QUESTION} is left out (the server's default).
 */
public record RetrieveParams(String query, Integer topK, Integer maxChars, List<String> paths,
                             List<String> languages, List<String> folders, Intent intent) {

    public static final int MAX_QUERY_CHARS = 4000;

    /** The {@code intent} of {@code rag/retrieve}. */
    public enum Intent {
        /** How does the code work: the plain ranking (the server's default). */
        QUESTION("question"),
        /**
         * The query describes a change to make (a task, a bug report, a commit message): the server
         * ranks the code the change will touch (files whose past commits read alike weigh in,
         * declarations keep full weight, docs and configuration weigh 0.3).
         */
        CHANGE("change");

        private final String wire;

        Intent(String wire) {
            this.wire = wire;
        }

        /** The value sent on the wire: {@code "question"} or {@code "change"}. */
        public String wire() {
            return wire;
        }
    }

    public RetrieveParams {
        if (query == null || query.isBlank()) {
            throw new IllegalArgumentException("query must not be empty");
        }
    }

    public RetrieveParams(String query, Integer topK, Integer maxChars, List<String> paths,
                          List<String> languages, List<String> folders) {
        this(query, topK, maxChars, paths, languages, folders, null);
    }

    public RetrieveParams(String query, Integer topK, Integer maxChars, List<String> paths,
                          List<String> languages) {
        this(query, topK, maxChars, paths, languages, null, null);
    }

    public static RetrieveParams of(String query, Integer topK, Integer maxChars) {
        return of(query, topK, maxChars, null);
    }

    /** {@link #of(String, Integer, Integer)} with an intent (null: the server's default, a question). */
    public static RetrieveParams of(String query, Integer topK, Integer maxChars, Intent intent) {
        return new RetrieveParams(clampQuery(query), topK, maxChars, null, null, null, intent);
    }

    /** The server accepts at most 4000 characters; longer chat messages are cut for the search. */
    public static String clampQuery(String query) {
        String q = query == null ? "" : query.strip();
        return q.length() > MAX_QUERY_CHARS ? q.substring(0, MAX_QUERY_CHARS) : q;
    }

    /** The params as sent: null and empty fields left out, so the server's defaults apply. */
    public JsonObject toJson() {
        JsonObject m = new JsonObject();
        m.addProperty("query", query);
        if (topK != null) {
            m.addProperty("topK", topK);
        }
        if (maxChars != null) {
            m.addProperty("maxChars", maxChars);
        }
        addList(m, "paths", paths);
        addList(m, "languages", languages);
        addList(m, "folders", folders);
        if (intent != null && intent != Intent.QUESTION) {
            m.addProperty("intent", intent.wire());
        }
        return m;
    }

    private static void addList(JsonObject m, String key, List<String> values) {
        if (values != null && !values.isEmpty()) {
            JsonArray a = new JsonArray();
            values.forEach(a::add);
            m.add(key, a);
        }
    }
}
