package dev.ragls.intellij.settings;

import com.intellij.openapi.application.ApplicationManager;
import com.intellij.openapi.components.PersistentStateComponent;
import com.intellij.openapi.components.State;
import com.intellij.openapi.components.Storage;
import com.intellij.util.xmlb.XmlSerializerUtil;
import dev.ragls.core.chat.ChatConfig;
import dev.ragls.core.chat.RagChat;
import dev.ragls.core.server.ClientSettings;
import dev.ragls.core.server.ServerLocator;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Application-level settings (Settings | Tools | ragls), stored in {@code ragls.xml}.
 * The chat API key is not here: it lives in the IDE's PasswordSafe ({@link RaglsApiKeyStore}).
 */
@State(name = "RaglsSettings", storages = @Storage("ragls.xml"))
public final class RaglsSettings implements PersistentStateComponent<RaglsSettings.State> {

    /** Serialized fields; keep them public and simple. */
    public static final class State {
        public String serverPath = "";
        public boolean ragEnabled = true;
        public int topK = ClientSettings.DEFAULT_TOP_K;
        public int maxChars = ClientSettings.DEFAULT_MAX_CHARS;
        public boolean autoIndex = ClientSettings.DEFAULT_AUTO_INDEX;
        public String chatBaseUrl = ChatConfig.OLLAMA_BASE_URL;
        public String chatModel = ChatConfig.DEFAULT_MODEL;
        public int chatTimeoutSeconds = 120;
        /**
         * Project folders whose own {@code .venv/bin/ragls} may be started, one absolute path per line.
         * IDE-level only (ragls.xml in the IDE's config folder): a project cannot add itself.
         */
        public String trustedFolders = "";
    }

    private State state = new State();

    public static RaglsSettings getInstance() {
        return ApplicationManager.getApplication().getService(RaglsSettings.class);
    }

    @Override
    public @NotNull State getState() {
        return state;
    }

    @Override
    public void loadState(@NotNull State loaded) {
        XmlSerializerUtil.copyBean(loaded, state);
    }

    /** The trusted folders as absolute paths (see {@link ServerLocator#parseTrustedFolders}). */
    public List<Path> trustedFolders() {
        return ServerLocator.parseTrustedFolders(state.trustedFolders);
    }

    public ClientSettings clientSettings() {
        return new ClientSettings(state.ragEnabled, state.topK, state.maxChars, state.autoIndex);
    }

    public RagChat.Options chatOptions() {
        ClientSettings c = clientSettings();
        return new RagChat.Options(c.ragEnabled(), c.topK(), c.maxChars(), 10);
    }

    /** The chat endpoint; {@code apiKey} comes from PasswordSafe (read it off the UI thread). */
    public ChatConfig chatConfig(@Nullable String apiKey) {
        Duration t = Duration.ofSeconds(Math.max(5, state.chatTimeoutSeconds));
        return new ChatConfig(state.chatBaseUrl, state.chatModel, apiKey == null ? "" : apiKey,
                Duration.ofSeconds(10), t, t);
    }
}
