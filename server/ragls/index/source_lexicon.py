"""The files a change description is about, by plain BM25 over the index's own source code.

A bug report or a commit message names many words of the code it is about, spread over several
functions of one file. The index's lexical vectors are tuned for short questions (k1 5, b 1:
ragls.text.lexical) and score tests, docs and prose as well; over one document per chunk of non-test
source code with Okapi's own constants (k1 1.2, b 0.75, the real average length, its own IDF)
a file ranked by its best chunk is a second opinion that `intent: "change"` fuses like the git
history's (query.file_boosts.file_boost). On the issue -> files task it lifted MRR@10 0.620 -> 0.668
on dev, 0.559 -> 0.569 on held-out; the index's own k1 5 / b 1 over the same documents lost on
held-out (offline, 0.472 against 0.554 for Okapi's constants).

The lexicon is built in the background from the store's payloads (a query never waits for it,
except the first change request of an index, briefly: SourceLexicon.wait_first) and built again
when the index has changed, at most every REBUILD_INTERVAL_S (or ten times as long as a build
takes); between builds it ranks from the code it last read, which is fine for a ranking of files.
It keeps the postings only (ragls.text.bm25.BM25Index.compact), not the code.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragls.text import lexical
from ragls.text.languages import is_code
from ragls.text.path_kinds import is_test_path  # the same test rule the demotion uses

if TYPE_CHECKING:  # numpy (ragls.text.bm25) loads with the first build, not at start-up
    from ragls.store.base import Store
    from ragls.text.bm25 import BM25Index, Document

log = logging.getLogger(__name__)

REBUILD_INTERVAL_S = 60.0
_PROSE_KINDS = frozenset({"section", "text"})
_BATCH = 1024
_ATTEMPTS = 3
_RETRY_S = 5.0


def is_source_chunk(payload: dict[str, object]) -> bool:
    path = str(payload.get("path") or "")
    return (
        is_code(str(payload.get("language") or ""))
        and payload.get("kind") not in _PROSE_KINDS
        and not is_test_path(path)
    )


def source_documents(store: Store) -> list[Document]:
    """One document per stored chunk of non-test source code: its symbol and its text."""
    from ragls.text.bm25 import Document

    ids = list(store.all_ids())
    docs: list[Document] = []
    for i in range(0, len(ids), _BATCH):
        for h in store.retrieve(ids[i : i + _BATCH]):
            p = h.payload
            if is_source_chunk(p):
                text = f"{p.get('symbol') or ''}\n{p.get('text') or ''}"
                docs.append(Document(h.id, str(p["path"]), int(p["start_line"]), int(p["end_line"]), text))  # type: ignore[arg-type]
    return docs


@dataclass(frozen=True)
class Lexicon:
    index: BM25Index
    generation: int

    def rank(self, query: str, limit: int) -> list[str]:
        """Files by their best chunk's BM25 score, best first."""
        files: dict[str, None] = {}
        for d in self.index.search(query, max(limit * 8, 64)):
            files.setdefault(d.path)
            if len(files) == limit:
                break
        return list(files)


class SourceLexicon:
    """A FileRanker (git_history.FileRanker) kept current with the index it reads."""

    def __init__(self, store: Callable[[], Store | None], generation: Callable[[], int]) -> None:
        self._store = store
        self._generation = generation
        self.lexicon: Lexicon | None = None
        self._lock = threading.Lock()
        self._building = False
        self._built_at = 0.0
        self._took = 0.0  # seconds the last build took
        self._attempted = threading.Event()

    def rank(self, query: str, limit: int) -> list[str]:
        self._maybe_refresh()
        lex = self.lexicon
        return lex.rank(query, limit) if lex is not None and limit > 0 else []

    def wait_first(self, timeout: float) -> bool:
        """Start the first build if none ran and wait up to `timeout` s for it (the first change
        request of an index waits for it once, as for the git history)."""
        self._maybe_refresh()
        if self.lexicon is None:
            self._attempted.wait(timeout)
        return self.lexicon is not None

    def build(self) -> Lexicon | None:
        """Read the store now, in the calling thread."""
        store = self._store()
        if store is None:
            return None
        from ragls.text.bm25 import BM25Index

        generation = self._generation()
        t0 = time.monotonic()
        index = BM25Index(source_documents(store), tokenizer=lexical.tokenize)
        index.compact()
        self._took = time.monotonic() - t0
        lex = Lexicon(index, generation)
        self.lexicon = lex
        return lex

    def _maybe_refresh(self) -> None:
        lex = self.lexicon
        if lex is not None and (
            lex.generation == self._generation()
            # A large index takes a while to read: at most a tenth of the time goes to rebuilds.
            or time.monotonic() - self._built_at < max(REBUILD_INTERVAL_S, 10 * self._took)
        ):
            return
        if lex is None and self._attempted.is_set() and time.monotonic() - self._built_at < _RETRY_S:
            return  # the last build failed a moment ago
        with self._lock:
            if self._building:
                return
            self._building = True
            self._built_at = time.monotonic()
        threading.Thread(target=self._refresh, name="ragls-source-lexicon", daemon=True).start()

    def _refresh(self) -> None:
        try:
            for attempt in range(_ATTEMPTS):
                try:
                    self.build()
                    break
                except Exception as exc:  # e.g. Edge's shard reloading after a vacuum; a closed store
                    if attempt == _ATTEMPTS - 1:
                        log.warning("source lexicon not built: %s", exc)
                    else:
                        time.sleep(0.5)
        finally:
            with self._lock:
                self._building = False
            self._attempted.set()
