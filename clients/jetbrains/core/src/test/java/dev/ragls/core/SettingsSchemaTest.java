package dev.ragls.core;

import dev.ragls.core.lsp.Trees;
import dev.ragls.core.server.ClientSettings;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Issue 17: the settings the plugin sends (its settings page) are the server's own: every key it
 * sends exists in {@code $RAGLS_SERVER schema --flat} with the same type, default and bounds.
 */
class SettingsSchemaTest {
    static Map<String, Object> schema() throws Exception {
        String server = System.getenv("RAGLS_SERVER");
        if (server == null || server.isBlank() || !Files.isExecutable(Path.of(server))) {
            String why = "the schema test needs RAGLS_SERVER (got " + server + ")";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                fail(why);
            }
            Assumptions.abort(why);
        }
        Process p = new ProcessBuilder(server, "schema", "--flat").redirectErrorStream(false).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "ragls schema timed out");
        assertEquals(0, p.exitValue(), "ragls schema --flat failed");
        return Trees.parseObject(out);
    }

    static void flatten(String prefix, Map<String, Object> m, Map<String, Object> out) {
        for (Map.Entry<String, Object> e : m.entrySet()) {
            if (e.getValue() instanceof Map) {
                flatten(prefix + e.getKey() + ".", Trees.asObject(e.getValue()), out);
            } else {
                out.put(prefix + e.getKey(), e.getValue());
            }
        }
    }

    @Test
    void sentSettingsAreTheSchemasNamesTypesAndDefaults() throws Exception {
        Map<String, Object> schema = schema();
        assertTrue(schema.size() > 40, "flat schema: " + schema.keySet());
        Map<String, Object> sent = new LinkedHashMap<>();
        flatten("", Trees.toMap(ClientSettings.defaults().toServerSettings()), sent);
        assertEquals(List.of("retrieval.topK", "retrieval.maxChars", "indexing.autoIndex"), List.copyOf(sent.keySet()));
        for (Map.Entry<String, Object> e : sent.entrySet()) {
            Map<String, Object> prop = Trees.asObject(schema.get(e.getKey()));
            assertNotNull(schema.get(e.getKey()), e.getKey() + " is not a server setting");
            Object dflt = prop.get("default");
            Object mine = e.getValue();
            if (mine instanceof Boolean) {
                assertEquals("boolean", prop.get("type"), e.getKey());
                assertEquals(dflt, mine, e.getKey() + " default");
            } else {
                assertEquals("integer", prop.get("type"), e.getKey());
                assertEquals(((Number) dflt).longValue(), ((Number) mine).longValue(), e.getKey() + " default");
            }
        }
        Map<String, Object> topK = Trees.asObject(schema.get("retrieval.topK"));
        assertEquals(ClientSettings.MIN_TOP_K, ((Number) topK.get("minimum")).intValue());
        assertEquals(ClientSettings.MAX_TOP_K, ((Number) topK.get("maximum")).intValue());
        Map<String, Object> maxChars = Trees.asObject(schema.get("retrieval.maxChars"));
        assertEquals(ClientSettings.MIN_MAX_CHARS, ((Number) maxChars.get("minimum")).intValue());
        assertEquals(ClientSettings.MAX_MAX_CHARS, ((Number) maxChars.get("maximum")).intValue());
    }
}
