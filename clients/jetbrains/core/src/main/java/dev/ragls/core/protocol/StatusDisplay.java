package dev.ragls.core.protocol;

import java.util.List;

import static dev.ragls.core.protocol.Wire.listOf;
import static dev.ragls.core.protocol.Wire.orEmpty;

/**
 * {@code IndexStatus.display}: what the user sees for a status, decided by the server
 * (docs/clients/status.md). {@code health} picks the glyph; {@code text} and {@code tooltip} are
 * shown as they are.
 */
public record StatusDisplay(String health, String text, List<String> tooltip) {
    public static final String OK = "ok";
    public static final String INDEXING = "indexing";
    public static final String WARNING = "warning";
    public static final String ERROR = "error";

    public StatusDisplay {
        health = orEmpty(health);
        text = orEmpty(text);
        tooltip = listOf(tooltip);
    }
}
