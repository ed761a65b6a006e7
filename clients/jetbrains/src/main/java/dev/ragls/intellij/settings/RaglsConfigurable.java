package dev.ragls.intellij.settings;

import com.intellij.openapi.application.ApplicationManager;
import com.intellij.openapi.application.ModalityState;
import com.intellij.openapi.fileChooser.FileChooserDescriptorFactory;
import com.intellij.openapi.options.Configurable;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.project.ProjectManager;
import com.intellij.openapi.ui.TextFieldWithBrowseButton;
import com.intellij.ui.components.JBCheckBox;
import com.intellij.ui.components.JBLabel;
import com.intellij.ui.components.JBPasswordField;
import com.intellij.ui.components.JBScrollPane;
import com.intellij.ui.components.JBTextArea;
import com.intellij.ui.components.JBTextField;
import com.intellij.util.ui.FormBuilder;
import dev.ragls.core.chat.ChatConfig;
import dev.ragls.core.server.ClientSettings;
import dev.ragls.intellij.RaglsProjectService;
import org.jetbrains.annotations.Nls;
import org.jetbrains.annotations.Nullable;

import javax.swing.JComponent;
import javax.swing.JPanel;
import javax.swing.JSpinner;
import javax.swing.SpinnerNumberModel;
import java.util.Objects;

/** Settings | Tools | ragls. */
public final class RaglsConfigurable implements Configurable {
    private TextFieldWithBrowseButton serverPath;
    private JBTextArea trustedFolders;
    private JBCheckBox ragEnabled;
    private JSpinner topK;
    private JSpinner maxChars;
    private JBCheckBox autoIndex;
    private JBTextField chatBaseUrl;
    private JBTextField chatModel;
    private JBPasswordField apiKey;
    private JSpinner chatTimeout;
    private String storedKey = "";
    private JPanel panel;

    @Override
    public @Nls String getDisplayName() {
        return "ragls";
    }

    @Override
    public @Nullable JComponent createComponent() {
        serverPath = new TextFieldWithBrowseButton();
        serverPath.addBrowseFolderListener(null, FileChooserDescriptorFactory.singleFile()
                .withTitle("ragls Executable")
                .withDescription("Path to the ragls server (empty: ragls on PATH)"));
        trustedFolders = new JBTextArea(3, 40);
        ragEnabled = new JBCheckBox("Enable project context (RAG)");
        topK = new JSpinner(new SpinnerNumberModel(ClientSettings.DEFAULT_TOP_K, ClientSettings.MIN_TOP_K, ClientSettings.MAX_TOP_K, 1));
        maxChars = new JSpinner(new SpinnerNumberModel(ClientSettings.DEFAULT_MAX_CHARS, ClientSettings.MIN_MAX_CHARS, ClientSettings.MAX_MAX_CHARS, 500));
        autoIndex = new JBCheckBox("Index the project automatically");
        chatBaseUrl = new JBTextField();
        chatBaseUrl.getEmptyText().setText(ChatConfig.OLLAMA_BASE_URL);
        chatModel = new JBTextField();
        apiKey = new JBPasswordField();
        apiKey.getEmptyText().setText("none (Ollama, LM Studio)");
        chatTimeout = new JSpinner(new SpinnerNumberModel(120, 5, 3600, 5));
        panel = FormBuilder.createFormBuilder()
                .addLabeledComponent("Server path:", serverPath)
                .addComponentToRightColumn(new JBLabel("Empty: ragls on your shell's PATH. A program inside a project runs only if set here."))
                .addLabeledComponent("Trusted project folders:", new JBScrollPane(trustedFolders))
                .addComponentToRightColumn(new JBLabel("One absolute path per line; these projects may start their own .venv/bin/ragls"))
                .addComponent(ragEnabled)
                .addLabeledComponent("Chunks per message (topK):", topK)
                .addLabeledComponent("Context budget (maxChars):", maxChars)
                .addComponent(autoIndex)
                .addSeparator()
                .addLabeledComponent("Chat base URL:", chatBaseUrl)
                .addComponentToRightColumn(new JBLabel("OpenAI-compatible: Ollama " + ChatConfig.OLLAMA_BASE_URL
                        + ", LM Studio " + ChatConfig.LM_STUDIO_BASE_URL))
                .addLabeledComponent("Chat model:", chatModel)
                .addLabeledComponent("API key:", apiKey)
                .addComponentToRightColumn(new JBLabel("Stored in the IDE password safe"))
                .addLabeledComponent("Chat timeout (s):", chatTimeout)
                .addComponentFillVertically(new JPanel(), 0)
                .getPanel();
        reset();
        return panel;
    }

    private static RaglsSettings.State state() {
        return RaglsSettings.getInstance().getState();
    }

    @Override
    public boolean isModified() {
        RaglsSettings.State s = state();
        return !serverPath.getText().strip().equals(s.serverPath)
                || !trustedFolders.getText().strip().equals(s.trustedFolders)
                || ragEnabled.isSelected() != s.ragEnabled
                || (Integer) topK.getValue() != s.topK
                || (Integer) maxChars.getValue() != s.maxChars
                || autoIndex.isSelected() != s.autoIndex
                || !chatBaseUrl.getText().strip().equals(s.chatBaseUrl)
                || !chatModel.getText().strip().equals(s.chatModel)
                || (Integer) chatTimeout.getValue() != s.chatTimeoutSeconds
                || !new String(apiKey.getPassword()).equals(storedKey);
    }

    @Override
    public void apply() {
        RaglsSettings.State s = state();
        boolean serverChanged = !serverPath.getText().strip().equals(s.serverPath) || ragEnabled.isSelected() != s.ragEnabled
                || !trustedFolders.getText().strip().equals(s.trustedFolders);
        s.serverPath = serverPath.getText().strip();
        s.trustedFolders = trustedFolders.getText().strip();
        s.ragEnabled = ragEnabled.isSelected();
        s.topK = (Integer) topK.getValue();
        s.maxChars = (Integer) maxChars.getValue();
        s.autoIndex = autoIndex.isSelected();
        s.chatBaseUrl = chatBaseUrl.getText().strip().isEmpty() ? ChatConfig.OLLAMA_BASE_URL : chatBaseUrl.getText().strip();
        s.chatModel = chatModel.getText().strip();
        s.chatTimeoutSeconds = (Integer) chatTimeout.getValue();
        String key = new String(apiKey.getPassword());
        if (!Objects.equals(key, storedKey)) {
            storedKey = key;
            ApplicationManager.getApplication().executeOnPooledThread(() -> RaglsApiKeyStore.set(key));
        }
        for (Project p : ProjectManager.getInstance().getOpenProjects()) {
            if (!p.isDisposed()) {
                RaglsProjectService.getInstance(p).settingsChanged(serverChanged);
            }
        }
    }

    @Override
    public void reset() {
        RaglsSettings.State s = state();
        serverPath.setText(s.serverPath);
        trustedFolders.setText(s.trustedFolders);
        ragEnabled.setSelected(s.ragEnabled);
        topK.setValue(s.topK);
        maxChars.setValue(s.maxChars);
        autoIndex.setSelected(s.autoIndex);
        chatBaseUrl.setText(s.chatBaseUrl);
        chatModel.setText(s.chatModel);
        chatTimeout.setValue(s.chatTimeoutSeconds);
        // PasswordSafe may block (OS keychain): read it off the UI thread
        ApplicationManager.getApplication().executeOnPooledThread(() -> {
            String key = Objects.requireNonNullElse(RaglsApiKeyStore.get(), "");
            ApplicationManager.getApplication().invokeLater(() -> {
                storedKey = key;
                if (apiKey != null) {
                    apiKey.setText(key);
                }
            }, ModalityState.any());
        });
    }

    @Override
    public void disposeUIResources() {
        panel = null;
        apiKey = null;
    }
}
