package dev.ragls.core;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.annotations.SerializedName;
import dev.ragls.core.lsp.RaglsSession;
import dev.ragls.core.lsp.Trees;
import dev.ragls.core.protocol.Chunk;
import dev.ragls.core.protocol.FeedbackParams;
import dev.ragls.core.protocol.FeedbackResult;
import dev.ragls.core.protocol.IndexStatus;
import dev.ragls.core.protocol.ReindexResult;
import dev.ragls.core.protocol.RetrieveParams;
import dev.ragls.core.protocol.RetrieveResult;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Issue 39: the core's protocol records are the server's payloads. Each record reachable from a
 * rag/* method's params or result is read (Gson: component name = JSON name, or its
 * {@code @SerializedName}) against {@code $RAGLS_SERVER schema --protocol}: every component must be
 * a property of the server's model with a compatible JSON type, a primitive one never null.
 */
class ProtocolSchemaTest {
    static JsonObject schema;

    @BeforeAll
    static void load() throws Exception {
        String server = System.getenv("RAGLS_SERVER");
        if (server == null || server.isBlank() || !Files.isExecutable(Path.of(server))) {
            String why = "the protocol schema test needs RAGLS_SERVER (got " + server + ")";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                fail(why);
            }
            Assumptions.abort(why);
        }
        Process p = new ProcessBuilder(server, "schema", "--protocol").start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "ragls schema timed out");
        assertEquals(0, p.exitValue(), "ragls schema --protocol failed");
        schema = Trees.parseTree(out).getAsJsonObject();
    }

    static JsonObject method(String name) {
        JsonObject m = schema.getAsJsonObject("methods").getAsJsonObject(name);
        assertNotNull(m, name + " is not in ragls schema --protocol");
        return m;
    }

    @Test
    void theMethodsThisClientUses() {
        assertEquals("request", method(RaglsSession.RETRIEVE).get("kind").getAsString());
        assertEquals("request", method(RaglsSession.INDEX_STATUS).get("kind").getAsString());
        assertEquals("request", method(RaglsSession.REINDEX).get("kind").getAsString());
        assertEquals("notification", method(RaglsSession.STATUS_CHANGED).get("kind").getAsString());
        assertEquals("request", method(RaglsSession.FEEDBACK).get("kind").getAsString());
    }

    @Test
    void feedbackRecordsAreTheServersModels() {
        List<String> checked = new ArrayList<>();
        check(FeedbackResult.class, method(RaglsSession.FEEDBACK).getAsJsonObject("result"), "rag/feedback", checked);
        JsonObject def = resolve(method(RaglsSession.FEEDBACK).getAsJsonObject("params"));
        check(FeedbackParams.class, def, "rag/feedback params", checked);
        for (String name : List.of("FeedbackResult.stored", "FeedbackResult.folders", "FeedbackParams.relevant",
                "Place.path", "Place.line", "FeedbackParams.comment", "RetrieveResult.resultId")) {
            assertTrue(checked.contains(name) || name.equals("RetrieveResult.resultId"), name + " not checked: " + checked);
        }
        // the JSON sent names only the server's params, with its rating values
        JsonObject props = def.getAsJsonObject("properties");
        FeedbackParams full = new FeedbackParams("id", FeedbackParams.Rating.DOWN,
                List.of(new FeedbackParams.Place("a.py", 3)), "why");
        for (String key : full.toJson().keySet()) {
            assertTrue(props.has(key), "rag/feedback params: " + key + " is not a server param");
        }
        Set<String> ratings = new HashSet<>();
        alternatives(props.getAsJsonObject("rating")).forEach(a -> a.getAsJsonArray("enum").forEach(e -> ratings.add(e.getAsString())));
        for (FeedbackParams.Rating r : FeedbackParams.Rating.values()) {
            assertTrue(ratings.contains(r.wire()), "rating " + r.wire() + " not in " + ratings);
        }
        List<String> retrieve = new ArrayList<>();
        check(RetrieveResult.class, method(RaglsSession.RETRIEVE).getAsJsonObject("result"), "rag/retrieve", retrieve);
        assertTrue(retrieve.contains("RetrieveResult.resultId"), retrieve.toString());
    }

    @Test
    void resultRecordsAreTheServersModels() {
        List<String> checked = new ArrayList<>();
        check(IndexStatus.class, method(RaglsSession.INDEX_STATUS).getAsJsonObject("result"), "rag/indexStatus", checked);
        check(IndexStatus.class, method(RaglsSession.STATUS_CHANGED).getAsJsonObject("params"), "rag/statusChanged", checked);
        check(RetrieveResult.class, method(RaglsSession.RETRIEVE).getAsJsonObject("result"), "rag/retrieve", checked);
        check(ReindexResult.class, method(RaglsSession.REINDEX).getAsJsonObject("result"), "rag/reindex", checked);
        // every nested record was reached: the status display, folders, chunk ranges, ...
        for (String name : List.of("IndexStatus.display", "StatusDisplay.health", "FolderStatus.nestedIn", "Chunk.range",
                "Range.start", "Position.character", "RetrieveResult.warnings", "ReindexResult.started")) {
            assertTrue(checked.contains(name), name + " not checked: " + checked);
        }
    }

    @Test
    void paramsAreTheServersParams() {
        JsonObject def = resolve(method(RaglsSession.RETRIEVE).getAsJsonObject("params"));
        JsonObject props = def.getAsJsonObject("properties");
        for (String key : new RetrieveParams("q", 5, 4000, List.of("a"), List.of("python"), List.of("web"), RetrieveParams.Intent.CHANGE)
                .toJson().keySet()) {
            assertTrue(props.has(key), "rag/retrieve params: " + key + " is not a server param");
        }
        // the record's components are the params' names; the intent's wire values are the server's
        check(RetrieveParams.class, def, "rag/retrieve params", new ArrayList<>());
        Set<String> intents = new HashSet<>();
        props.getAsJsonObject("intent").getAsJsonArray("enum").forEach(e -> intents.add(e.getAsString()));
        for (RetrieveParams.Intent i : RetrieveParams.Intent.values()) {
            assertTrue(intents.contains(i.wire()), "intent " + i.wire() + " not in " + intents);
        }
        JsonObject reindex = resolve(method(RaglsSession.REINDEX).getAsJsonObject("params")).getAsJsonObject("properties");
        assertTrue(reindex.has("full"), "rag/reindex params: full");
    }

    // ------------------------------------------------------------------ the check

    static JsonObject resolve(JsonObject node) {
        JsonElement ref = node.get("$ref");
        if (ref == null) {
            return node;
        }
        String name = ref.getAsString().replace("#/$defs/", "");
        JsonObject def = schema.getAsJsonObject("$defs").getAsJsonObject(name);
        assertNotNull(def, "no $def " + name);
        return def;
    }

    /** The alternatives of a schema node ({@code anyOf}, else itself), resolved. */
    static List<JsonObject> alternatives(JsonObject node) {
        List<JsonObject> out = new ArrayList<>();
        JsonArray any = node.getAsJsonArray("anyOf");
        if (any == null) {
            out.add(resolve(node));
        } else {
            any.forEach(a -> out.add(resolve(a.getAsJsonObject())));
        }
        return out;
    }

    static String jsonType(JsonObject node) {
        if (node.has("type")) {
            return node.get("type").getAsString();
        }
        return node.has("properties") ? "object" : "?";
    }

    static void check(Class<?> record, JsonObject node, String where, List<String> checked) {
        assertTrue(record.isRecord(), record + " is not a record");
        JsonObject def = resolve(node);
        JsonObject props = def.getAsJsonObject("properties");
        assertNotNull(props, where + ": not an object in the schema");
        for (RecordComponent rc : record.getRecordComponents()) {
            SerializedName sn = rc.getAnnotation(SerializedName.class);
            String name = sn != null ? sn.value() : rc.getName();
            String at = where + "." + name;
            assertTrue(props.has(name), at + ": " + record.getSimpleName() + " reads a field the server does not have");
            checked.add(record.getSimpleName() + "." + name);
            compatible(rc.getGenericType(), props.getAsJsonObject(name), at, checked);
        }
    }

    static void compatible(Type type, JsonObject node, String at, List<String> checked) {
        List<JsonObject> alts = alternatives(node);
        boolean nullable = alts.stream().anyMatch(a -> "null".equals(jsonType(a)));
        List<JsonObject> values = alts.stream().filter(a -> !"null".equals(jsonType(a))).toList();
        assertEquals(1, values.size(), at + ": one JSON type expected, got " + node);
        JsonObject v = values.get(0);
        String t = jsonType(v);
        if (type instanceof Class<?> c && c.isPrimitive()) {
            assertTrue(!nullable, at + ": the server may send null, " + c + " cannot hold it");
        }
        Class<?> raw = type instanceof ParameterizedType pt ? (Class<?>) pt.getRawType() : (Class<?>) type;
        if (raw == String.class) {
            assertEquals("string", t, at);
        } else if (raw == long.class || raw == int.class || raw == Long.class || raw == Integer.class) {
            assertEquals("integer", t, at);
        } else if (raw == double.class || raw == Double.class) {
            assertTrue(t.equals("number") || t.equals("integer"), at + ": " + t);
        } else if (raw == boolean.class || raw == Boolean.class) {
            assertEquals("boolean", t, at);
        } else if (raw.isEnum()) {
            assertEquals("string", t, at);
        } else if (List.class.isAssignableFrom(raw)) {
            assertEquals("array", t, at);
            compatible(((ParameterizedType) type).getActualTypeArguments()[0], v.getAsJsonObject("items"), at + "[]", checked);
        } else if (Map.class.isAssignableFrom(raw)) {
            assertEquals("object", t, at);
            JsonElement extra = v.get("additionalProperties");
            assertTrue(extra != null && extra.isJsonObject(), at + ": not a map in the schema");
            compatible(((ParameterizedType) type).getActualTypeArguments()[1], extra.getAsJsonObject(), at + "{}", checked);
        } else if (raw.isRecord()) {
            assertEquals("object", t, at);
            check(raw, v, at, checked);
        } else {
            fail(at + ": no JSON type for " + type);
        }
    }

    @Test
    void theCheckCatchesAWrongRecord() {
        record Renamed(String state, long filesTotl) {
        }
        record WrongType(String chunks) {
        }
        JsonObject status = method(RaglsSession.INDEX_STATUS).getAsJsonObject("result");
        assertThrowsAssertion(() -> check(Renamed.class, status, "t", new ArrayList<>()), "filesTotl");
        assertThrowsAssertion(() -> check(WrongType.class, status, "t", new ArrayList<>()), "chunks");
        // a primitive where the server may send null (message is string | null)
        record PrimitiveNull(long message) {
        }
        assertThrowsAssertion(() -> check(PrimitiveNull.class, status, "t", new ArrayList<>()), "message");
        // an unused chunk record type still reads
        check(Chunk.Position.class, resolve(resolve(schema.getAsJsonObject("$defs").getAsJsonObject("Range"))
                .getAsJsonObject("properties").getAsJsonObject("start")), "Position", new ArrayList<>());
    }

    static void assertThrowsAssertion(Runnable r, String mention) {
        try {
            r.run();
        } catch (AssertionError e) {
            assertTrue(String.valueOf(e.getMessage()).contains(mention), e.getMessage());
            return;
        }
        fail("no mismatch found (" + mention + ")");
    }
}
