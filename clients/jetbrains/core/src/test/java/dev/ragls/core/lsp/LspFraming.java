package dev.ragls.core.lsp;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** LSP base protocol framing: {@code Content-Length: N\r\n\r\n} followed by N bytes of UTF-8 JSON. */
public final class LspFraming {
    /** Refuse absurd frames rather than allocating them. */
    public static final int MAX_CONTENT_LENGTH = 64 * 1024 * 1024;

    private LspFraming() {
    }

    public static byte[] frame(String json) {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        byte[] header = ("Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[header.length + body.length];
        System.arraycopy(header, 0, out, 0, header.length);
        System.arraycopy(body, 0, out, header.length, body.length);
        return out;
    }

    public static void write(OutputStream out, String json) throws IOException {
        out.write(frame(json));
        out.flush();
    }

    /**
     * Reads one message body. Returns null on a clean end of stream before a header starts; throws
     * {@link EOFException} if the stream ends inside a message and {@link IOException} on a bad header.
     */
    public static String read(InputStream in) throws IOException {
        int contentLength = -1;
        boolean sawAnything = false;
        while (true) {
            String line = readHeaderLine(in, sawAnything);
            if (line == null) {
                return null;
            }
            sawAnything = true;
            if (line.isEmpty()) {
                if (contentLength < 0) {
                    throw new IOException("LSP message without Content-Length header");
                }
                break;
            }
            int colon = line.indexOf(':');
            if (colon <= 0) {
                throw new IOException("Malformed LSP header line: " + line);
            }
            String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = line.substring(colon + 1).trim();
            if (name.equals("content-length")) {
                try {
                    contentLength = Integer.parseInt(value);
                } catch (NumberFormatException e) {
                    throw new IOException("Bad Content-Length: " + value);
                }
                if (contentLength < 0 || contentLength > MAX_CONTENT_LENGTH) {
                    throw new IOException("Content-Length out of range: " + value);
                }
            }
        }
        byte[] body = in.readNBytes(contentLength);
        if (body.length != contentLength) {
            throw new EOFException("Stream ended inside an LSP message body");
        }
        return new String(body, StandardCharsets.UTF_8);
    }

    private static String readHeaderLine(InputStream in, boolean inMessage) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream(64);
        while (true) {
            int b = in.read();
            if (b < 0) {
                if (!inMessage && buf.size() == 0) {
                    return null;
                }
                throw new EOFException("Stream ended inside an LSP header");
            }
            if (b == '\n') {
                byte[] bytes = buf.toByteArray();
                int len = bytes.length;
                if (len > 0 && bytes[len - 1] == '\r') {
                    len--;
                }
                return new String(bytes, 0, len, StandardCharsets.US_ASCII);
            }
            if (buf.size() > 8192) {
                throw new IOException("LSP header line too long");
            }
            buf.write(b);
        }
    }
}
