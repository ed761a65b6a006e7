package dev.ragls.core.chat;

import java.net.URI;
import java.time.Duration;

/**
 * Where and how to reach an OpenAI-compatible chat-completions endpoint. Defaults suit a local
 * Ollama ({@code http://localhost:11434/v1}); LM Studio is {@code http://localhost:1234/v1}.
 *
 * @param baseUrl        API base, e.g. {@code http://localhost:11434/v1}; a full
 *                       {@code .../chat/completions} URL is accepted too
 * @param model          model name sent in the request
 * @param apiKey         bearer token, or empty for local servers
 * @param connectTimeout TCP connect timeout
 * @param requestTimeout time allowed until the response headers arrive
 * @param idleTimeout    longest silence allowed between two streamed chunks
 */
public record ChatConfig(String baseUrl, String model, String apiKey, Duration connectTimeout,
                         Duration requestTimeout, Duration idleTimeout) {

    public static final String OLLAMA_BASE_URL = "http://localhost:11434/v1";
    public static final String LM_STUDIO_BASE_URL = "http://localhost:1234/v1";
    public static final String DEFAULT_MODEL = "llama3.2";

    public static ChatConfig of(String baseUrl, String model, String apiKey) {
        return new ChatConfig(baseUrl, model, apiKey, Duration.ofSeconds(10), Duration.ofSeconds(120),
                Duration.ofSeconds(120));
    }

    public ChatConfig withTimeouts(Duration connect, Duration request, Duration idle) {
        return new ChatConfig(baseUrl, model, apiKey, connect, request, idle);
    }

    /** The chat-completions URL derived from {@link #baseUrl()}. */
    public URI completionsUri() throws ChatException {
        String base = baseUrl == null ? "" : baseUrl.strip();
        if (base.isEmpty()) {
            throw new ChatException(ChatException.Kind.CONFIG, "No chat endpoint is configured.");
        }
        while (base.endsWith("/")) {
            base = base.substring(0, base.length() - 1);
        }
        String url = base.endsWith("/chat/completions") ? base : base + "/chat/completions";
        try {
            URI uri = URI.create(url);
            if (uri.getScheme() == null || !(uri.getScheme().equals("http") || uri.getScheme().equals("https"))
                    || uri.getHost() == null) {
                throw new IllegalArgumentException("not an http(s) URL");
            }
            return uri;
        } catch (IllegalArgumentException e) {
            throw new ChatException(ChatException.Kind.CONFIG, 0, "Invalid chat endpoint '" + baseUrl + "': " + e.getMessage(), e);
        }
    }
}
