package dev.ragls.core.lsp;

import dev.ragls.core.chat.RagChat;
import dev.ragls.core.protocol.FeedbackParams;
import dev.ragls.core.protocol.FeedbackResult;
import dev.ragls.core.protocol.IndexStatus;
import dev.ragls.core.protocol.ReindexResult;
import dev.ragls.core.protocol.RetrieveParams;
import dev.ragls.core.protocol.RetrieveResult;

import java.time.Duration;
import java.util.List;

/** Typed {@code rag/*} calls over an {@link LspClient}. */
public final class RaglsSession implements RagChat.Retriever, RagChat.Rater {
    public static final String RETRIEVE = "rag/retrieve";
    public static final String INDEX_STATUS = "rag/indexStatus";
    public static final String REINDEX = "rag/reindex";
    public static final String STATUS_CHANGED = "rag/statusChanged";
    public static final String FEEDBACK = "rag/feedback";

    private final LspClient client;
    private final Duration timeout;

    public RaglsSession(LspClient client, Duration timeout) {
        this.client = client;
        this.timeout = timeout;
    }

    @Override
    public RetrieveResult retrieve(RetrieveParams params) throws LspException, InterruptedException {
        return RetrieveResult.fromJson(Trees.tree(client.requestSync(RETRIEVE, params.toJson(), timeout)));
    }

    public IndexStatus indexStatus() throws LspException, InterruptedException {
        return IndexStatus.fromJson(Trees.tree(client.requestSync(INDEX_STATUS, Trees.obj(), timeout)));
    }

    public ReindexResult reindex(boolean full) throws LspException, InterruptedException {
        return ReindexResult.fromJson(Trees.tree(client.requestSync(REINDEX, Trees.obj("full", full), timeout)));
    }

    @Override
    public FeedbackResult feedback(FeedbackParams params) throws LspException, InterruptedException {
        return FeedbackResult.fromJson(Trees.tree(client.requestSync(FEEDBACK, params.toJson(), timeout)));
    }

    /** {@code rag/feedback}: rates the answer {@code resultId}; {@code relevant} and {@code comment} may be null. */
    public FeedbackResult feedback(String resultId, FeedbackParams.Rating rating, List<FeedbackParams.Place> relevant,
                                   String comment) throws LspException, InterruptedException {
        return feedback(new FeedbackParams(resultId, rating, relevant, comment));
    }

    public LspClient client() {
        return client;
    }
}
