"""One stored rating (a line of a folder's feedback file), and the pure parts of replaying it:
where a marked location ranks in an answer, whether an answer changed, the MRR of a set."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

if TYPE_CHECKING:
    from ragls.protocol import ChunkOut, RetrieveResultOut

RECORD_VERSION = 1


class _Rec(BaseModel):
    # Unknown keys are ignored: a file written by a newer ragls still reads.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class StoredChunk(_Rec):
    """A chunk of the rated answer, in its rank order: where it was, not its text."""

    path: str  # relative to the folder
    start_line: int  # 1-based, inclusive
    end_line: int
    symbol: str | None = None
    # A hash of the shown chunk (path, lines, text): the same chunk shown again has the same id.
    id: str = ""


class Mark(_Rec):
    """A location marked relevant: a chunk of an answer covering `path:line` counts as found."""

    path: str  # relative to the folder
    line: int  # 1-based


class StoredSettings(_Rec):
    """What shaped the ranking, replayed as it was."""

    top_k: int
    intent: Literal["question", "change"] = "question"
    paths: list[str] | None = None  # the folder's own globs (a multi-root question's, split)
    languages: list[str] | None = None
    mode: str = "hybrid"  # retrieval.mode of the folder when it answered
    kind: str | None = None  # rag/findSymbol's kind filter


class IndexVersion(_Rec):
    ragls: str
    protocol: int
    model: str  # the embedding model's id


class FeedbackRecord(_Rec):
    version: int = RECORD_VERSION
    id: str  # the answer's resultId: a later rating of the same answer replaces this one
    time: str  # ISO 8601, UTC
    rating: Literal["up", "down"]
    method: Literal["rag/retrieve", "rag/findSymbol"]
    query: str  # secret lines redacted (secrets.scan)
    redacted: bool = False  # the query or comment had a secret line, stored redacted
    comment: str | None = None
    folder: str  # the client's name for the folder when rated
    settings: StoredSettings
    index: IndexVersion
    chunks: list[StoredChunk] = Field(default_factory=list)
    relevant: list[Mark] = Field(default_factory=list)


def chunk_key(path: str, start_line: int, end_line: int, text: str) -> str:
    """The id of a shown chunk: 16 hex digits of a hash of where it is and what it says."""
    return hashlib.sha1(f"{path}\n{start_line}\n{end_line}\n{text}".encode()).hexdigest()[:16]


def rank_of(chunks: list[StoredChunk], mark: Mark) -> int | None:
    """The 1-based rank of the first chunk covering the marked line, None when none does."""
    for i, c in enumerate(chunks, 1):
        if c.path == mark.path and c.start_line <= mark.line <= c.end_line:
            return i
    return None


def ranks_of(chunks: list[StoredChunk], marks: list[Mark]) -> list[int | None]:
    return [rank_of(chunks, m) for m in marks]


def best(ranks: list[int | None]) -> int | None:
    found = [r for r in ranks if r is not None]
    return min(found) if found else None


def locations(chunks: list[StoredChunk]) -> list[tuple[str, int, int]]:
    """An answer as the ranked places it showed (the text may change while they stay)."""
    return [(c.path, c.start_line, c.end_line) for c in chunks]


def mrr(ranks: list[int | None]) -> float | None:
    """Mean reciprocal rank over the marked questions (a mark not found counts 0); None when
    no question has a mark."""
    if not ranks:
        return None
    return sum(1.0 / r for r in ranks if r) / len(ranks)


def stored_chunk(c: ChunkOut) -> StoredChunk:
    """A chunk of an answer as a rating stores it (path, 1-based lines, symbol, key)."""
    start, end = c.range.start.line + 1, max(c.range.start.line + 1, c.range.end.line)
    return StoredChunk(
        path=c.path, start_line=start, end_line=end, symbol=c.symbol, id=chunk_key(c.path, start, end, c.content)
    )


def shown_chunks(res: RetrieveResultOut) -> list[StoredChunk]:
    """The chunks of an answer as a rating stores them, in rank order."""
    return [stored_chunk(c) for c in res.chunks]
