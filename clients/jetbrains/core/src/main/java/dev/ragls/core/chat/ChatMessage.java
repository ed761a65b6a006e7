package dev.ragls.core.chat;

import dev.ragls.core.json.Json;
import dev.ragls.core.json.JsonWritable;

/** One chat-completions message. */
public record ChatMessage(String role, String content) implements JsonWritable {
    public static ChatMessage system(String content) {
        return new ChatMessage("system", content);
    }

    public static ChatMessage user(String content) {
        return new ChatMessage("user", content);
    }

    public static ChatMessage assistant(String content) {
        return new ChatMessage("assistant", content);
    }

    @Override
    public Object toJson() {
        return Json.obj("role", role, "content", content);
    }
}
