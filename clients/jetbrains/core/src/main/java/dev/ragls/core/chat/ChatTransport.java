package dev.ragls.core.chat;

import java.util.List;
import java.util.function.Consumer;

/** Something that answers a chat, streaming the text through {@code onDelta}. */
public interface ChatTransport {
    String stream(List<ChatMessage> messages, Consumer<String> onDelta) throws ChatException;
}
