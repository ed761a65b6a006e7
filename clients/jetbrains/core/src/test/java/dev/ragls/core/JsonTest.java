package dev.ragls.core;

import dev.ragls.core.json.Json;
import dev.ragls.core.json.JsonException;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JsonTest {
    @Test
    void parsesAllValueKinds() {
        Map<String, Object> m = Json.parseObject(
                "{\"s\":\"a\\\"b\\\\c\\n\\u00e9\\ud83d\\ude00\",\"i\":-12,\"d\":1.5e2,\"t\":true,\"f\":false,\"n\":null,"
                        + "\"a\":[1,[2],{}],\"o\":{\"k\":\"v\"}}");
        assertEquals("a\"b\\c\n\u00e9\ud83d\ude00", m.get("s"));
        assertEquals(-12L, m.get("i"));
        assertEquals(150.0, m.get("d"));
        assertEquals(Boolean.TRUE, m.get("t"));
        assertEquals(Boolean.FALSE, m.get("f"));
        assertTrue(m.containsKey("n"));
        assertNull(m.get("n"));
        assertEquals(List.of(1L, List.of(2L), Map.of()), m.get("a"));
        assertEquals(Map.of("k", "v"), m.get("o"));
        assertEquals(List.of("s", "i", "d", "t", "f", "n", "a", "o"), List.copyOf(m.keySet()), "key order is kept");
    }

    @Test
    void roundTripsThroughWrite() {
        Map<String, Object> in = Json.obj("text", "line1\nline2\t\"q\" \u0001 \u2028 <rag_context>", "n", 3,
                "x", 0.25, "list", Arrays.asList(1, null, "z"), "nested", Json.obj("b", false));
        String json = Json.write(in);
        assertTrue(json.contains("\\u0001"));
        assertTrue(json.contains("\\u2028"));
        Map<String, Object> back = Json.parseObject(json);
        assertEquals(in.get("text"), back.get("text"));
        assertEquals(3L, back.get("n"));
        assertEquals(0.25, back.get("x"));
        assertEquals(Arrays.asList(1L, null, "z"), back.get("list"));
        assertEquals(Map.of("b", false), back.get("nested"));
    }

    @Test
    void writesWholeDoublesAsIntegers() {
        assertEquals("[2,2.5]", Json.write(List.of(2.0, 2.5)));
    }

    @Test
    void bigIntegersBecomeDoubles() {
        assertEquals(1.0E20, Json.parse("100000000000000000000"));
    }

    @Test
    void rejectsMalformedInput() {
        for (String bad : new String[]{"", "{", "{\"a\":}", "[1,]", "{\"a\" 1}", "tru", "\"abc", "01x", "{} x",
                "\"\\q\"", "\"a\u0001\"", "-", "1.", "1e", "{1:2}", "[1 2]"}) {
            assertThrows(JsonException.class, () -> Json.parse(bad), bad);
        }
    }

    @Test
    void typedAccessorsTolerateWrongTypes() {
        Map<String, Object> m = Json.parseObject("{\"a\":\"x\",\"b\":2,\"c\":[1]}");
        assertEquals(7, Json.getInt(m, "a", 7));
        assertEquals("d", Json.getString(m, "b", "d"));
        assertEquals(2.0, Json.getDouble(m, "b", 0));
        assertEquals(Map.of(), Json.getObject(m, "c"));
        assertEquals(List.of(), Json.getList(m, "a"));
        assertEquals(List.of(1L), Json.getList(m, "c"));
    }
}
