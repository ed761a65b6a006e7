// Test-only signature stub of com.intellij.credentialStore.CredentialAttributes from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.credentialStore;

import org.jetbrains.annotations.NotNull;

public final class CredentialAttributes {
    public CredentialAttributes(@NotNull String serviceName) {
    }
}
