package dev.ragls.core.status;

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

    /** {@code 1234 -> "1,234"} regardless of the default locale. */
    public static String number(long n) {
        return String.format(Locale.US, "%,d", n);
    }

    /** {@code RAG … 1,234/5,000} (the shared status view's indexing text, from $/progress). */
    public static String counts(long done, long total) {
        return PENDING + " " + number(Math.min(done, total)) + "/" + number(total);
    }

    /** {@code RAG … 42%}. */
    public static String percent(int pct) {
        return PENDING + " " + Math.max(0, Math.min(100, pct)) + "%";
    }
}
