package dev.ragls.intellij.settings;

import com.intellij.credentialStore.CredentialAttributes;
import com.intellij.credentialStore.CredentialAttributesKt;
import com.intellij.ide.passwordSafe.PasswordSafe;
import org.jetbrains.annotations.Nullable;

/** The chat API key, kept in the IDE's PasswordSafe (OS keychain or KeePass), never in ragls.xml. */
public final class RaglsApiKeyStore {
    private RaglsApiKeyStore() {
    }

    private static CredentialAttributes attributes() {
        return new CredentialAttributes(CredentialAttributesKt.generateServiceName("ragls", "chat API key"));
    }

    /** May block on the OS keychain: call from a background thread. */
    public static @Nullable String get() {
        return PasswordSafe.getInstance().getPassword(attributes());
    }

    /** Blank or null removes the key. */
    public static void set(@Nullable String key) {
        PasswordSafe.getInstance().setPassword(attributes(), key == null || key.isBlank() ? null : key.strip());
    }
}
