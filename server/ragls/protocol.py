"""Pydantic models of the rag/* payloads; docs/protocol.md is their prose twin."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_serializer, field_validator, model_validator
from pydantic.alias_generators import to_camel

from ragls import PROTOCOL_VERSION  # re-exported: the version of these payloads
from ragls.status_display import display as display_of


def _not_blank(v: str) -> str:
    if not v.strip():
        raise ValueError("must not be blank")
    return v


NonBlank = Annotated[str, AfterValidator(_not_blank)]


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class RetrieveParams(_Wire):
    query: NonBlank = Field(min_length=1, max_length=4000)
    # Unset (not sent): the server's `retrieval.topK` / `retrieval.maxChars` settings apply.
    top_k: int = Field(default=10, ge=1, le=100)
    max_chars: int = Field(default=4000, ge=0, le=200_000)
    paths: list[str] | None = Field(default=None, max_length=50)
    languages: list[str] | None = Field(default=None, max_length=50)
    # Workspace folders to search, by name or URI (multi-root); unset: all of them.
    folders: list[str] | None = Field(default=None, max_length=100)
    # "change": the query describes a change to make (a task, a bug report, a commit message) and
    # the files it touches are wanted: files whose earlier commits were described alike rank
    # higher (ragls.git.history) and declarations weigh as much as functions. "question" (how does
    # the code work) keeps the plain ranking: the history costs it precision (doc->code questions
    # on six repositories with history: MRR@10 0.686 without it, 0.659 at find_files' setting).
    intent: Literal["question", "change"] = "question"

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    @field_validator("paths", "languages", "folders")
    @classmethod
    def _short_items(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and any(len(x) > 500 for x in v):
            raise ValueError("items must be at most 500 characters")
        return v


class Position(_Wire):
    line: int
    character: int


class Range(_Wire):
    start: Position
    end: Position


class ChunkOut(_Wire):
    uri: str
    path: str
    range: Range
    symbol: str | None
    kind: str
    language: str
    score: float
    content: str
    # The workspace folder the chunk comes from (`path` is relative to it).
    folder: str | None = None
    folder_uri: str | None = None


class RetrieveResultOut(_Wire):
    context: str
    chunks: list[ChunkOut]
    took_ms: float
    # "No retrieval": nothing could be searched; context and chunks are then empty.
    error: str | None = None
    # "Degraded": results came, but from less than the full search (e.g. lexical only).
    warnings: list[str] = Field(default_factory=list)
    # The answer's id for `rag/feedback` (protocol 6): given by the process that answered the
    # client, remembered there for its last 200 answers; None when rating is off
    # (`feedback.enabled`) or there was no folder to search.
    result_id: str | None = None


class ReindexParams(_Wire):
    full: bool = False
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class Progress(_Wire):
    done: int
    total: int


class EmbedderInfo(_Wire):
    provider: str
    model: str
    dimension: int
    # Where the bundled model runs ("cpu" or "cuda", setting embedder.device); None for HTTP
    # providers and before the model is open.
    device: str | None = None


class StoreInfo(_Wire):
    kind: str
    location: str


class CacheInfo(_Wire):
    hits: int
    misses: int
    hit_rate: float


class SnapshotInfo(_Wire):
    """The `embedder.snapshot` this index takes vectors from: `vectors` in the file, `reused` of
    them taken by this index instead of embedding."""

    source: str
    state: Literal["importing", "imported", "failed"]
    vectors: int = 0
    reused: int = 0
    message: str | None = None


class ErrorOut(_Wire):
    path: str
    message: str
    time: str


class FolderStatus(_Wire):
    """One workspace folder in `IndexStatus.folders`: its own counters, or zeros and `nestedIn`
    when another open folder contains (and indexes) it."""

    name: str
    uri: str
    path: str
    state: Literal["indexing", "ready", "error"]
    phase: str
    files_total: int = 0
    files_indexed: int = 0
    files_failed: int = 0
    chunks: int = 0
    lexical: Progress = Field(default_factory=lambda: Progress(done=0, total=0))
    dense: Progress = Field(default_factory=lambda: Progress(done=0, total=0))
    errors: list[ErrorOut] = Field(default_factory=list)
    message: str | None = None
    nested_in: str | None = None


class StatusDisplay(_Wire):
    """What a client shows for an `IndexStatus`, decided by the server (status_display.py,
    docs/clients/status.md): `health` picks the client's icon, `text` is the status bar's short
    text, `tooltip` its lines."""

    health: Literal["ok", "indexing", "warning", "error"]
    text: str
    tooltip: list[str]


class IndexStatus(_Wire):
    # Counters default to zero: the status before the indexer runs is just state and identity.
    state: Literal["indexing", "ready", "error"]
    phase: str
    files_total: int = 0
    files_indexed: int = 0
    files_failed: int = 0
    files_skipped: int = 0
    skipped_by_reason: dict[str, int] = Field(default_factory=dict)
    chunks: int = 0
    lexical: Progress = Field(default_factory=lambda: Progress(done=0, total=0))
    dense: Progress = Field(default_factory=lambda: Progress(done=0, total=0))
    last_indexed_at: str | None = None
    embedder: EmbedderInfo
    store: StoreInfo
    cache: CacheInfo = Field(default_factory=lambda: CacheInfo(hits=0, misses=0, hit_rate=0.0))
    embedded: int = 0
    snapshot: SnapshotInfo | None = None
    errors: list[ErrorOut] = Field(default_factory=list)
    workspace: str = ""
    version: str = ""
    protocol_version: int = PROTOCOL_VERSION
    message: str | None = None
    # Things the user should know that do not stop indexing (e.g. ignored workspace settings).
    warnings: list[str] = Field(default_factory=list)
    # Whether file changes are being seen right now (false while the watcher starts, is down or is off).
    watching: bool = False
    # One entry per workspace folder, in workspace order; the fields above are their totals.
    folders: list[FolderStatus] = Field(default_factory=list)
    # What clients show (status_display.py). Derived from the fields above each time the status
    # is serialised, so it always matches them; a value read back (from the owner socket) is
    # accepted and replaced.
    display: StatusDisplay | None = None

    @field_serializer("display")
    def _display(self, _given: StatusDisplay | None) -> StatusDisplay:
        return StatusDisplay(**display_of(self.model_dump(by_alias=True, exclude={"display"})))


# -- shared index: what a client process asks the folder's owner (docs/owner-socket.md) --


class SymbolParams(_Wire):
    """`rag/findSymbol`: definitions whose stored symbol equals `name` or ends with `.name`."""

    name: NonBlank = Field(min_length=1, max_length=500)
    kind: str | None = Field(default=None, max_length=100)
    top_k: int = Field(default=10, ge=1, le=100)
    max_chars: int = Field(default=4000, ge=0, le=200_000)
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class DocumentParams(_Wire):
    """`rag/openDocument` (with `text`) and `rag/closeDocument`: an editor buffer of a client
    process, by workspace-relative path."""

    path: str = Field(min_length=1, max_length=4000)
    text: str | None = None


class OwnerHello(_Wire):
    """`rag/hello`: who serves the folder, so a client can check it reached the right owner."""

    workspace: str
    version: str
    pid: int


class StatusEnvelope(_Wire):
    """`rag/indexStatus` over the owner socket: the status plus the count of index runs started,
    so a client's progress reporter also sees runs shorter than its polling interval."""

    status: IndexStatus
    runs: int = 0


# -- the index API's method table (sharing/api.py): the params and results no model above describes --


class NoParams(_Wire):
    """The params of a method that takes none (`rag/hello`, `rag/indexStatus`): anything is accepted."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class ReindexResult(_Wire):
    """`rag/reindex`: false when an index run was already going (it re-runs once that ends)."""

    started: bool


class Empty(_Wire):
    """The result of `rag/openDocument` and `rag/closeDocument`: `{}`."""


# -- the code graph (ragls.graph): rag/references, rag/related, rag/repoMap --------------------


class ReferencesParams(_Wire):
    """`rag/references`: the uses of a definition, found by name and import scope."""

    # A definition's name, bare or qualified (`total`, `Invoice.total`; `::` and `#` count as dots).
    symbol: NonBlank = Field(min_length=1, max_length=500)
    # The file that defines it (workspace-relative; `folder/path` with several folders): only the
    # uses that resolve to that definition. Unset: every definition of that name.
    path: str | None = Field(default=None, min_length=1, max_length=4000)
    limit: int = Field(default=200, ge=1, le=2000)
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class Location(_Wire):
    path: str
    line: int  # 1-based
    # The innermost definition holding the use (`Invoice.total`); None at a file's top level.
    symbol: str | None
    kind: Literal["call", "reference", "import"]
    folder: str | None = None
    folder_uri: str | None = None


class ReferencesResult(_Wire):
    locations: list[Location]
    # Why the answer may be incomplete (the index still building, more uses than `limit`, a name
    # not defined in the index so uses are matched by name alone); [] when none.
    warnings: list[str] = Field(default_factory=list)
    # Nothing could be read (the index is not open); `locations` is then [].
    error: str | None = None


class RelatedParams(_Wire):
    """`rag/related`: a definition's (or a file's) neighbours in the code graph."""

    symbol: str | None = Field(default=None, min_length=1, max_length=500)
    path: str | None = Field(default=None, min_length=1, max_length=4000)
    limit: int = Field(default=50, ge=1, le=500)  # items per list
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    @model_validator(mode="after")
    def _symbol_or_path(self) -> RelatedParams:
        if not (self.symbol and self.symbol.strip()) and not self.path:
            raise ValueError("symbol or path is required")
        return self


class Related(_Wire):
    """A place to go: a definition (`definition`, `callees`), a use (`callers`: `symbol` is the
    definition holding it), a file (`imports`: line 1) or an import statement (`importedBy`)."""

    symbol: str | None
    path: str
    line: int  # 1-based
    folder: str | None = None
    folder_uri: str | None = None


class RelatedResult(_Wire):
    definition: list[Related]  # the candidates, best first (an ambiguous name has several)
    callers: list[Related]
    callees: list[Related]
    imports: list[Related]
    imported_by: list[Related]
    warnings: list[str] = Field(default_factory=list)
    error: str | None = None


class RepoMapParams(_Wire):
    """`rag/repoMap`: the repository's outline, its most referenced files first."""

    # What the map should be about: files matching it (by retrieval) are ranked first.
    query: str | None = Field(default=None, max_length=4000)
    max_tokens: int = Field(default=1024, ge=64, le=32_000)
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class MapDefinition(_Wire):
    symbol: str
    kind: str
    line: int
    signature: str


class MapFile(_Wire):
    path: str
    # PageRank of the file scaled by the number of files (1.0: an average file).
    score: float
    definitions: list[MapDefinition]
    folder: str | None = None
    folder_uri: str | None = None


class RepoMapResult(_Wire):
    text: str  # the outline: each file's path, then its definitions' signatures with their lines
    files: list[MapFile]  # what `text` shows, best first
    tokens: int  # of `text`, estimated as characters / 4
    warnings: list[str] = Field(default_factory=list)
    error: str | None = None


# -- an answer that could not be given ----------------------------------------------------------

Answer = TypeVar("Answer", RetrieveResultOut, ReferencesResult, RelatedResult, RepoMapResult)

_NOTHING: dict[type[BaseModel], dict[str, Any]] = {
    RetrieveResultOut: {"context": "", "chunks": [], "took_ms": 0.0},
    ReferencesResult: {"locations": []},
    RelatedResult: {"definition": [], "callers": [], "callees": [], "imports": [], "imported_by": []},
    RepoMapResult: {"text": "", "files": [], "tokens": 0},
}


def unanswered(kind: type[Answer], why: str, notice: bool = False) -> Answer:
    """The one shape of a question's answer when it could not be answered: empty, with `why` as
    its `error`; with `notice` as its only warning instead (nothing is wrong: there is nothing
    to find yet)."""
    return kind(**_NOTHING[kind], **({"warnings": [why]} if notice else {"error": why}))


# -- feedback (ragls.feedback): rag/feedback, the MCP `feedback` tool ---------------------------


class FeedbackLocation(_Wire):
    """A place in the code the user (or agent) says was the right answer."""

    # Workspace-relative ('folder/path' with several folders, as in graph requests), or an
    # absolute path or file:// URI inside a workspace folder.
    path: str = Field(min_length=1, max_length=4000)
    line: int = Field(ge=1)  # 1-based


class FeedbackParams(_Wire):
    """`rag/feedback`: a rating of one answer (`resultId` of a `rag/retrieve` or `rag/findSymbol`
    result of this server process)."""

    result_id: str = Field(min_length=1, max_length=100)
    rating: Literal["up", "down"]
    relevant: list[FeedbackLocation] | None = Field(default=None, max_length=50)
    comment: str | None = Field(default=None, max_length=4000)
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class FeedbackResult(_Wire):
    """`rag/feedback`: whether the rating was stored, and in which folders' files."""

    stored: bool
    folders: list[str] = Field(default_factory=list)
    # Why nothing (or less) was stored: rating off (`feedback.enabled`), the state folder unusable.
    message: str | None = None
