package dev.ragls.intellij.lsp;

import com.google.gson.JsonObject;
import com.intellij.openapi.project.Project;
import com.redhat.devtools.lsp4ij.client.LanguageClientImpl;
import dev.ragls.core.protocol.IndexStatus;
import dev.ragls.core.protocol.ProgressEvent;
import dev.ragls.intellij.RaglsProjectService;
import dev.ragls.intellij.settings.RaglsSettings;
import org.eclipse.lsp4j.ProgressParams;
import org.eclipse.lsp4j.WorkDoneProgressBegin;
import org.eclipse.lsp4j.WorkDoneProgressEnd;
import org.eclipse.lsp4j.WorkDoneProgressNotification;
import org.eclipse.lsp4j.WorkDoneProgressReport;
import org.eclipse.lsp4j.jsonrpc.services.JsonNotification;

/**
 * LSP4IJ's client plus what ragls adds: {@code rag/statusChanged}, progress forwarded to the
 * status bar (LSP4IJ still shows it as IDE background progress), and the {@code ragls}
 * section for {@code workspace/configuration}.
 */
public final class RaglsLanguageClient extends LanguageClientImpl {
    public RaglsLanguageClient(Project project) {
        super(project);
    }

    private RaglsProjectService service() {
        return RaglsProjectService.getInstance(getProject());
    }

    @JsonNotification("rag/statusChanged")
    public void statusChanged(JsonObject params) {
        if (!isDisposed()) {
            service().onStatus(IndexStatus.fromJson(params));
        }
    }

    @Override
    public void notifyProgress(ProgressParams params) {
        super.notifyProgress(params);
        if (isDisposed() || params.getValue() == null || !params.getValue().isLeft()) {
            return;
        }
        String token = params.getToken().isLeft() ? params.getToken().getLeft() : String.valueOf(params.getToken().getRight());
        WorkDoneProgressNotification n = params.getValue().getLeft();
        ProgressEvent event;
        if (n instanceof WorkDoneProgressBegin b) {
            event = new ProgressEvent(token, "begin", b.getTitle(), b.getMessage(), b.getPercentage());
        } else if (n instanceof WorkDoneProgressReport r) {
            event = new ProgressEvent(token, "report", null, r.getMessage(), r.getPercentage());
        } else if (n instanceof WorkDoneProgressEnd e) {
            event = new ProgressEvent(token, "end", null, e.getMessage(), null);
        } else {
            return;
        }
        service().onProgress(event);
    }

    @Override
    protected Object createSettings() {
        JsonObject root = new JsonObject();
        root.add("ragls", RaglsSettings.getInstance().clientSettings().toServerSettings());
        return root;
    }
}
