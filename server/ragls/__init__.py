"""ragls: a code-retrieval language server backed by Qdrant."""

__version__ = "0.1.0"

# Bumped when a rag/* payload's meaning changes (docs/protocol.md, "Versions"). 2: degraded
# retrieval answers results plus `warnings`, and `error` always means "no retrieval". 3:
# multi-root workspaces (`folders` in rag/retrieve params and IndexStatus, `folder`/`folderUri`
# per chunk). 4: `intent` in rag/retrieve params ("change": rank the files a described change touches).
# 5: the code graph: rag/references, rag/related, rag/repoMap. 6: `resultId` in rag/retrieve and
# rag/findSymbol results, rated by rag/feedback.
# Here rather than in ragls.protocol so that `initialize` can announce it before pydantic is
# imported.
PROTOCOL_VERSION = 6
