package dev.ragls.core.protocol;

import dev.ragls.core.json.JsonWritable;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Params of {@code rag/retrieve}. Null fields are left out so the server's defaults apply.
 * {@code folders} (protocol 3): search only these workspace folders, by name or URI.
 */
public record RetrieveParams(String query, Integer topK, Integer maxChars, List<String> paths,
                             List<String> languages, List<String> folders) implements JsonWritable {

    public static final int MAX_QUERY_CHARS = 4000;

    public RetrieveParams {
        if (query == null || query.isBlank()) {
            throw new IllegalArgumentException("query must not be empty");
        }
    }

    public RetrieveParams(String query, Integer topK, Integer maxChars, List<String> paths,
                          List<String> languages) {
        this(query, topK, maxChars, paths, languages, null);
    }

    public static RetrieveParams of(String query, Integer topK, Integer maxChars) {
        return new RetrieveParams(clampQuery(query), topK, maxChars, null, null, null);
    }

    /** The server accepts at most 4000 characters; longer chat messages are cut for the search. */
    public static String clampQuery(String query) {
        String q = query == null ? "" : query.strip();
        return q.length() > MAX_QUERY_CHARS ? q.substring(0, MAX_QUERY_CHARS) : q;
    }

    @Override
    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("query", query);
        if (topK != null) {
            m.put("topK", topK);
        }
        if (maxChars != null) {
            m.put("maxChars", maxChars);
        }
        if (paths != null && !paths.isEmpty()) {
            m.put("paths", paths);
        }
        if (languages != null && !languages.isEmpty()) {
            m.put("languages", languages);
        }
        if (folders != null && !folders.isEmpty()) {
            m.put("folders", folders);
        }
        return m;
    }
}
