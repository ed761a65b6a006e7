package dev.ragls.core.lsp;

/** A JSON-RPC error answer, or a request that could not complete (server gone, timeout). */
public class LspException extends Exception {
    private static final long serialVersionUID = 1L;

    public static final int PARSE_ERROR = -32700;
    public static final int INVALID_REQUEST = -32600;
    public static final int METHOD_NOT_FOUND = -32601;
    public static final int INVALID_PARAMS = -32602;
    public static final int INTERNAL_ERROR = -32603;
    /** Not a JSON-RPC code: the connection closed before an answer came. */
    public static final int CONNECTION_CLOSED = -1;
    /** Not a JSON-RPC code: no answer within the caller's timeout. */
    public static final int TIMEOUT = -2;

    private final int code;
    private final Object data;

    public LspException(int code, String message, Object data) {
        super(message);
        this.code = code;
        this.data = data;
    }

    public int code() {
        return code;
    }

    public Object data() {
        return data;
    }
}
