package dev.ragls.intellij.lsp;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.ragls.core.json.Json;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

import java.util.Map;

/** Converts between LSP4J's Gson trees and the core's plain maps (via JSON text; payloads are small). */
public final class GsonBridge {
    private GsonBridge() {
    }

    public static @NotNull JsonObject toGson(@NotNull Map<String, Object> map) {
        return JsonParser.parseString(Json.write(map)).getAsJsonObject();
    }

    public static @NotNull Map<String, Object> toMap(@Nullable JsonElement element) {
        if (element == null || element.isJsonNull() || !element.isJsonObject()) {
            return Map.of();
        }
        return Json.parseObject(element.toString());
    }
}
