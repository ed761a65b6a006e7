package dev.ragls.intellij.lsp;

import com.redhat.devtools.lsp4ij.ServerStatus;
import com.redhat.devtools.lsp4ij.client.features.LSPClientFeatures;
import dev.ragls.intellij.RaglsProjectService;
import org.jetbrains.annotations.NotNull;

/**
 * ragls serves the whole project, not open files, so it stays up with no editor open. Unlike
 * {@code LanguageClientImpl.handleServerStatusChanged} (which only sees {@code stopping} and
 * {@code started}), this hook sees every status transition, so a stop from LSP4IJ's own UI reaches
 * the status bar.
 */
final class RaglsClientFeatures extends LSPClientFeatures {
    @Override
    public boolean keepServerAlive() {
        return true;
    }

    @Override
    public void handleServerStatusChanged(@NotNull ServerStatus serverStatus) {
        if (!getProject().isDisposed()) {
            RaglsProjectService.getInstance(getProject()).onHostStatus(serverStatus);
        }
    }
}
