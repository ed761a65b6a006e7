// Test-only signature stub of com.intellij.ide.passwordSafe.PasswordSafe from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.ide.passwordSafe;

import com.intellij.credentialStore.CredentialAttributes;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

public abstract class PasswordSafe {
    public static @NotNull PasswordSafe getInstance() {
        return null;
    }

    public @Nullable String getPassword(@NotNull CredentialAttributes attributes) {
        return null;
    }

    public void setPassword(@NotNull CredentialAttributes attributes, @Nullable String value) {
    }
}
