"""The one index API: every method a folder's index answers, declared once with its params and
result types (the method table, after esbonio's), and the verbs every implementation shares.

Three classes implement it, each by `call(method, params, source)` alone:

- `service.LocalIndex`: the folder's index in this process (indexer, watcher, buffers);
- `owner_rpc.OwnerProxy`: the same calls sent to the folder's owner process over the owner
  socket, on pygls's JSON-RPC protocol;
- `shared_index.SharedIndex`: whichever of the two this process has now (owner, client or
  private), taking the index over when its owner goes away.

The owner socket serves a `LocalIndex` by this table too (`owner_rpc.OwnerServer`): a request's
params are validated by its method's model here, its result is written by its result model, and
every caller's mistake is `InvalidParams` (JSON-RPC -32602), formatted once
(`validation_message`). A request that leaves out `topK`/`maxChars` gets the retrieval settings
(`budget`), wherever it is answered. docs/owner-socket.md lists the methods.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from ragls.config import RetrievalSettings
from ragls.protocol import (
    DocumentParams,
    Empty,
    FeedbackParams,
    FeedbackResult,
    NoParams,
    OwnerHello,
    ReferencesParams,
    ReferencesResult,
    ReindexParams,
    ReindexResult,
    RelatedParams,
    RelatedResult,
    RepoMapParams,
    RepoMapResult,
    RetrieveParams,
    RetrieveResultOut,
    StatusEnvelope,
    SymbolParams,
)

LOCAL = "local"  # the source of this process's own editor buffers (client processes: their connection)


class InvalidParams(ValueError):
    """The caller's mistake (params, globs, folder names, document paths): JSON-RPC -32602 on
    every wire, an error result in MCP, an exit message in the CLI."""


@dataclass(frozen=True, eq=False)
class Method:
    """One method of the index API."""

    name: str  # its JSON-RPC name
    params: type[BaseModel]  # validates what a caller sends
    result: type[BaseModel]  # writes (and, in a client process, reads back) the answer
    doc: str
    # A question being answered: the indexer's store writes wait meanwhile (system/foreground.py).
    foreground: bool = False
    # How long a client process waits for the owner's answer, in seconds.
    timeout: float = 120.0


HELLO = Method("rag/hello", NoParams, OwnerHello, "who serves the folder: {workspace, version, pid}", timeout=10.0)
STATUS = Method(
    "rag/indexStatus", NoParams, StatusEnvelope, "the status and the index runs started", foreground=True, timeout=30.0
)
RETRIEVE = Method("rag/retrieve", RetrieveParams, RetrieveResultOut, "ranked chunks and the context", foreground=True)
FIND_SYMBOL = Method("rag/findSymbol", SymbolParams, RetrieveResultOut, "definitions by name", foreground=True)
REINDEX = Method("rag/reindex", ReindexParams, ReindexResult, "re-scan (or rebuild) the index")
REFERENCES = Method(
    "rag/references", ReferencesParams, ReferencesResult, "the uses of a definition (code graph)", foreground=True
)
RELATED = Method(
    "rag/related", RelatedParams, RelatedResult, "a definition's or file's callers, callees, imports", foreground=True
)
REPO_MAP = Method("rag/repoMap", RepoMapParams, RepoMapResult, "the ranked outline of the repository", foreground=True)
OPEN_DOCUMENT = Method("rag/openDocument", DocumentParams, Empty, "an editor buffer wins over the file", timeout=30.0)
CLOSE_DOCUMENT = Method("rag/closeDocument", DocumentParams, Empty, "the buffer reverts to the file", timeout=30.0)

METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        HELLO,
        STATUS,
        RETRIEVE,
        FIND_SYMBOL,
        REFERENCES,
        RELATED,
        REPO_MAP,
        REINDEX,
        OPEN_DOCUMENT,
        CLOSE_DOCUMENT,
    )
}


# Answered by the workspace of the process a client talks to, never by a folder's index: the
# `resultId` a rating names was given out, and its answer remembered, by that process (the LSP
# server, `ragls mcp`), so the owner socket does not serve these (docs/feedback.md).
FEEDBACK = Method(
    "rag/feedback", FeedbackParams, FeedbackResult, "store a rating of an answer (docs/feedback.md)", timeout=30.0
)

WORKSPACE_METHODS: dict[str, Method] = {FEEDBACK.name: FEEDBACK}


class IndexApi(ABC):
    """A folder's index, wherever it runs. Blocking and thread-safe: the front ends call it from
    worker threads (`asyncio.to_thread`), never from their event loop."""

    @abstractmethod
    def call(self, method: Method, params: BaseModel, source: str = LOCAL) -> Any:
        """Answer `method` (`params` an instance of its params model) with its result model.
        `source`: whose editor a document method comes from (a client connection, or LOCAL)."""

    # The verbs, once: every implementation is its `call`.
    def hello(self) -> OwnerHello:
        return self.call(HELLO, NoParams())  # type: ignore[no-any-return]

    def status(self) -> StatusEnvelope:
        return self.call(STATUS, NoParams())  # type: ignore[no-any-return]

    def retrieve(self, p: RetrieveParams) -> RetrieveResultOut:
        """Raises InvalidParams for bad globs."""
        return self.call(RETRIEVE, p)  # type: ignore[no-any-return]

    def find_symbol(self, p: SymbolParams) -> RetrieveResultOut:
        return self.call(FIND_SYMBOL, p)  # type: ignore[no-any-return]

    def references(self, p: ReferencesParams) -> ReferencesResult:
        return self.call(REFERENCES, p)  # type: ignore[no-any-return]

    def related(self, p: RelatedParams) -> RelatedResult:
        return self.call(RELATED, p)  # type: ignore[no-any-return]

    def repo_map(self, p: RepoMapParams) -> RepoMapResult:
        return self.call(REPO_MAP, p)  # type: ignore[no-any-return]

    def reindex(self, full: bool = False) -> bool:
        """False when a run was already going (it re-runs once that ends)."""
        return bool(self.call(REINDEX, ReindexParams(full=full)).started)

    def open_document(self, path: str, text: str, source: str = LOCAL) -> None:
        """`path` workspace-relative; the buffer wins over the file on disk."""
        self.call(OPEN_DOCUMENT, DocumentParams(path=path, text=text), source)

    def close_document(self, path: str, source: str = LOCAL) -> None:
        self.call(CLOSE_DOCUMENT, DocumentParams(path=path), source)


def validation_message(err: ValidationError) -> str:
    """A pydantic error as one line naming each field: `topK: Input should be ...` (the first five)."""
    parts = []
    for e in err.errors()[:5]:
        loc = ".".join(str(p) for p in e["loc"]) or "params"
        parts.append(f"{loc}: {e['msg']}")
    return "; ".join(parts)


def parse_params(method: Method, raw: Any) -> BaseModel:
    """A request's params as its method's model; InvalidParams naming the field otherwise."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise InvalidParams("params must be an object")
    try:
        return method.params.model_validate(raw)
    except ValidationError as exc:
        raise InvalidParams(validation_message(exc)) from exc


def budget(p: RetrieveParams, settings: RetrievalSettings) -> tuple[int, int]:
    """topK and maxChars of a request: what it sent, else the `retrieval.topK` and
    `retrieval.maxChars` settings (docs/protocol.md). Unset fields are not sent on to an owner,
    so the settings that apply are those of the process that answers."""
    top_k = p.top_k if "top_k" in p.model_fields_set else settings.top_k
    max_chars = p.max_chars if "max_chars" in p.model_fields_set else settings.max_chars
    return top_k, max_chars


def safe_rel(rel: str) -> str:
    """Document paths are workspace-relative POSIX paths, never absolute or climbing out."""
    parts = rel.replace("\\", "/").split("/")
    if rel.startswith("/") or ".." in parts or "" in parts or "." in parts:
        raise InvalidParams(f"path: {rel!r} must be a workspace-relative path")
    return rel
