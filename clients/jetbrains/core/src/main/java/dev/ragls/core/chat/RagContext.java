package dev.ragls.core.chat;

import dev.ragls.core.protocol.Chunk;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** Puts the server's {@code <rag_context>} block in front of a message and lists its sources. */
public final class RagContext {
    private RagContext() {
    }

    /**
     * The text sent to the model: the {@code <rag_context>} block, a blank line, then the user's
     * words unchanged. With no context the user's text is returned as is.
     */
    public static String prepend(String context, String userText) {
        String text = userText == null ? "" : userText;
        if (context == null || context.isBlank()) {
            return text;
        }
        String block = context.strip();
        return block + "\n\n" + text;
    }

    /** True if {@code message} starts with a {@code <rag_context>} block. */
    public static boolean hasContext(String message) {
        return message != null && message.startsWith("<rag_context>");
    }

    /** Removes a leading {@code <rag_context>} block (what {@link #prepend} added). */
    public static String strip(String message) {
        if (!hasContext(message)) {
            return message;
        }
        int end = message.indexOf("</rag_context>");
        if (end < 0) {
            return message;
        }
        String rest = message.substring(end + "</rag_context>".length());
        return rest.startsWith("\n\n") ? rest.substring(2) : rest.stripLeading();
    }

    /**
     * Distinct {@code file:line} sources in rank order. A file is told by its URI: two folders of a
     * multi-root workspace may hold the same relative path.
     */
    public static List<Chunk> sources(List<Chunk> chunks) {
        List<Chunk> out = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        for (Chunk c : chunks) {
            String file = c.uri() == null || c.uri().isEmpty() ? c.path() : c.uri();
            if (seen.add(file + ":" + c.firstLine())) {
                out.add(c);
            }
        }
        return out;
    }

    /** {@code Sources: billing/invoice.py:22, web/src/session.ts:3} (plain text form). */
    public static String sourcesLine(List<Chunk> chunks) {
        return sourcesLine(chunks, false);
    }

    /** The same, with {@code folder/path} in a workspace of 2+ folders. */
    public static String sourcesLine(List<Chunk> chunks, boolean multiRoot) {
        List<String> parts = new ArrayList<>();
        for (Chunk c : sources(chunks)) {
            parts.add(c.fileLine(multiRoot));
        }
        return parts.isEmpty() ? "" : "Sources: " + String.join(", ", parts);
    }
}
