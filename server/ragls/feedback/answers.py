"""The answers a process gave out lately, so a rating can store what was shown.

`rag/retrieve` and `rag/findSymbol` answers (and the MCP tools') get a `resultId`; the process
that answered keeps the last `SIZE` of them (question, settings, ranked locations per folder;
never the code's text) in memory. A rating names one: `records` turns it, with the marks, into
one record per folder to store (docs/feedback.md: which folders).
"""

from __future__ import annotations

import secrets as random_ids
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ragls import PROTOCOL_VERSION, __version__
from ragls.feedback.records import FeedbackRecord, IndexVersion, Mark, StoredChunk, StoredSettings, stored_chunk

if TYPE_CHECKING:
    from ragls.config import Settings
    from ragls.protocol import ChunkOut

SIZE = 200  # answers remembered per process; an older resultId is an invalid-params error


@dataclass
class Part:
    """One folder's share of an answer."""

    name: str  # the client's name for the folder
    root: Path
    settings: StoredSettings
    model: str
    chunks: list[StoredChunk] = field(default_factory=list)


@dataclass
class Answer:
    method: Literal["rag/retrieve", "rag/findSymbol"]
    query: str
    parts: list[Part]


def model_of(settings: Settings) -> str:
    """The embedding model's id without loading it or asking a provider."""
    from ragls.embedding import local_identity

    identity = local_identity(settings.embedder)
    if identity is not None:
        return identity[0]
    return f"{settings.embedder.provider}:{settings.embedder.model}"


def stored_chunks(chunks: list[ChunkOut]) -> dict[str | None, list[StoredChunk]]:
    """An answer's chunks by folder name, each as where it was (1-based lines), in rank order."""
    out: dict[str | None, list[StoredChunk]] = {}
    for c in chunks:
        out.setdefault(c.folder, []).append(stored_chunk(c))
    return out


class Answers:
    """A bounded LRU of answers by resultId. Used on one event loop (the front end's)."""

    def __init__(self, size: int = SIZE) -> None:
        self.size = size
        self._items: OrderedDict[str, Answer] = OrderedDict()

    def remember(self, answer: Answer) -> str:
        rid = random_ids.token_hex(12)  # unguessable: a rating names an answer this client saw
        self._items[rid] = answer
        while len(self._items) > self.size:
            self._items.popitem(last=False)
        return rid

    def get(self, rid: str) -> Answer | None:
        answer = self._items.get(rid)
        if answer is not None:
            self._items.move_to_end(rid)
        return answer


def redacted(text: str | None) -> tuple[str | None, bool]:
    """`text` with its secret lines replaced (the code's own scan, ingest/secrets.py), and whether any was."""
    if not text:
        return text, False
    from ragls.ingest.secrets import scan

    r = scan(text)
    return r.text, r.lines > 0


def records(
    rid: str,
    answer: Answer,
    rating: Literal["up", "down"],
    marks: dict[str, list[Mark]],
    comment: str | None,
    now: float | None = None,
) -> list[tuple[Part, FeedbackRecord]]:
    """The record to store per folder: every folder the question searched that showed a chunk or
    holds a mark; when none did (an empty answer), every folder it searched. `marks` by folder
    name, paths relative to that folder."""
    query, q_hit = redacted(answer.query)
    note, c_hit = redacted(comment)
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if now is None else now))
    rated = [p for p in answer.parts if p.chunks or marks.get(p.name)] or answer.parts
    return [
        (
            p,
            FeedbackRecord(
                id=rid,
                time=when,
                rating=rating,
                method=answer.method,
                query=query or "",
                redacted=q_hit or c_hit,
                comment=note,
                folder=p.name,
                settings=p.settings,
                index=IndexVersion(ragls=__version__, protocol=PROTOCOL_VERSION, model=p.model),
                chunks=p.chunks,
                relevant=marks.get(p.name, []),
            ),
        )
        for p in rated
    ]
