package dev.ragls.intellij.lsp;

import com.google.gson.JsonObject;
import org.eclipse.lsp4j.jsonrpc.services.JsonRequest;
import org.eclipse.lsp4j.services.LanguageServer;

import java.util.concurrent.CompletableFuture;

/** The ragls custom requests (docs/protocol.md), proxied by LSP4J. Payloads stay JSON trees. */
public interface RaglsServerApi extends LanguageServer {
    @JsonRequest("rag/retrieve")
    CompletableFuture<JsonObject> retrieve(JsonObject params);

    @JsonRequest("rag/indexStatus")
    CompletableFuture<JsonObject> indexStatus(JsonObject params);

    @JsonRequest("rag/reindex")
    CompletableFuture<JsonObject> reindex(JsonObject params);

    /** Protocol 6: a rating of one answer (its {@code resultId}); the server stores it. */
    @JsonRequest("rag/feedback")
    CompletableFuture<JsonObject> feedback(JsonObject params);
}
