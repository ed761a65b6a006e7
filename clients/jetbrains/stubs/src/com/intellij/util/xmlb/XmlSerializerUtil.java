// Test-only signature stub of com.intellij.util.xmlb.XmlSerializerUtil from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.util.xmlb;

import org.jetbrains.annotations.NotNull;

public final class XmlSerializerUtil {
    public static <T> void copyBean(@NotNull T from, @NotNull T to) {
    }
}
