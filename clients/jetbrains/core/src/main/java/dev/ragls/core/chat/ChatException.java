package dev.ragls.core.chat;

/** A chat request that did not produce an answer; {@link #kind()} says why. */
public class ChatException extends Exception {
    private static final long serialVersionUID = 1L;

    public enum Kind { HTTP_STATUS, TIMEOUT, CONNECTION, PROTOCOL, CANCELLED, CONFIG }

    private final Kind kind;
    private final int status;

    public ChatException(Kind kind, int status, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
        this.status = status;
    }

    public ChatException(Kind kind, String message) {
        this(kind, 0, message, null);
    }

    public Kind kind() {
        return kind;
    }

    /** HTTP status for {@link Kind#HTTP_STATUS}, else 0. */
    public int status() {
        return status;
    }
}
