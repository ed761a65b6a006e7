package dev.ragls.core.status;

import dev.ragls.core.protocol.StatusDisplay;

import java.util.Locale;

/** The short texts shown in the status bar. All formatting is locale-independent. */
public final class StatusText {
    public static final String PREFIX = "RAG";
    public static final String READY = PREFIX + " \u2713";      // RAG ✓
    public static final String ERROR = PREFIX + " \u2717";      // RAG ✗
    public static final String PENDING = PREFIX + " \u2026";    // RAG …
    public static final String OFF = PREFIX + " off";

    private StatusText() {
    }

    /** The glyph of a status health (docs/clients/status.md): ✓ ok, ⚠ warning, ✗ error, … indexing. */
    public static String glyph(String health) {
        switch (health) {
            case StatusDisplay.OK:
                return "\u2713";
            case StatusDisplay.WARNING:
                return "\u26a0";
            case StatusDisplay.ERROR:
                return "\u2717";
            default:
                return "\u2026";
        }
    }

    /** {@code RAG ✓ 1,234 chunks}: the server's display, its text as it is. */
    public static String bar(StatusDisplay d) {
        return PREFIX + " " + glyph(d.health()) + " " + d.text();
    }

    /** {@code 1234 -> "1,234"} regardless of the default locale. */
    public static String number(long n) {
        return String.format(Locale.US, "%,d", n);
    }

    /** {@code RAG … 1,234/5,000} (a $/progress's n/N). */
    public static String counts(long done, long total) {
        return PENDING + " " + number(Math.min(done, total)) + "/" + number(total);
    }

    /** {@code RAG … 42%}. */
    public static String percent(int pct) {
        return PENDING + " " + Math.max(0, Math.min(100, pct)) + "%";
    }
}
