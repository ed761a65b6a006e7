// Test-only signature stub of com.intellij.credentialStore.CredentialAttributesKt from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.credentialStore;

import org.jetbrains.annotations.NotNull;

public final class CredentialAttributesKt {
    public static @NotNull String generateServiceName(@NotNull String subsystem, @NotNull String key) {
        return "";
    }
}
