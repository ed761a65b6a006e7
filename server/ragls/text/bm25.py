"""Okapi BM25 over in-memory documents: the baseline `ragls eval` scores ragls against
(ragls.evaluation.bm25) and the ranking of files by their commit history (ragls.git.history).

The index is an inverted index in CSR form (postings sorted by term, numpy arrays) with the
per-posting BM25 weight precomputed, so a query is a handful of vectorised adds over the
postings of its terms; ~50k documents x 500 queries takes seconds, not minutes.
"""

from __future__ import annotations

import math
import re
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

__all__ = [
    "BM25Index",
    "Document",
    "ScoredDocument",
    "Tokenizer",
    "simple_tokenize",
]

Tokenizer = Callable[[str], Iterable[str]]

_WORD = re.compile(r"\w+")


def simple_tokenize(text: str) -> list[str]:
    """Lower-cased runs of word characters; the plain baseline tokenizer."""
    return _WORD.findall(text.lower())


class Document(NamedTuple):
    """One retrievable unit; plain 5-tuples in this order are accepted too."""

    doc_id: str
    path: str
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    text: str


@dataclass(frozen=True, slots=True)
class ScoredDocument:
    document: Document
    score: float

    # The metrics take anything with path/start_line/end_line, so expose them directly.
    @property
    def path(self) -> str:
        return self.document.path

    @property
    def start_line(self) -> int:
        return self.document.start_line

    @property
    def end_line(self) -> int:
        return self.document.end_line

    @property
    def doc_id(self) -> str:
        return self.document.doc_id


class BM25Index:
    """Okapi BM25 with Lucene's non-negative idf: ln(1 + (N - n + 0.5) / (n + 0.5))."""

    def __init__(
        self,
        documents: Iterable[Document | Sequence[object]],
        tokenizer: Tokenizer = simple_tokenize,
        k1: float = 1.2,
        b: float = 0.75,
    ) -> None:
        self.k1 = k1
        self.b = b
        self.tokenizer = tokenizer
        self.documents: list[Document] = [
            doc if isinstance(doc, Document) else Document(*doc)  # type: ignore[arg-type]
            for doc in documents
        ]
        self.vocabulary: dict[str, int] = {}
        self._build()

    def __len__(self) -> int:
        return len(self.documents)

    def _build(self) -> None:
        # Typed arrays, not lists: a large corpus (the source lexicon: millions of postings)
        # would hold a Python int object per entry while the index is built.
        term_ids = array("q")
        doc_ids = array("q")
        freqs = array("q")
        lengths = np.zeros(len(self.documents), dtype=np.float64)
        vocab = self.vocabulary
        for index, doc in enumerate(self.documents):
            counts = Counter(self.tokenizer(doc.text))
            lengths[index] = sum(counts.values())
            for term, freq in counts.items():
                term_ids.append(vocab.setdefault(term, len(vocab)))
                doc_ids.append(index)
                freqs.append(freq)

        terms = np.frombuffer(term_ids, dtype=np.int64) if term_ids else np.zeros(0, dtype=np.int64)
        # Stable sort keeps each term's postings in document order (deterministic ties).
        order = np.argsort(terms, kind="stable")
        self._postings = (np.frombuffer(doc_ids, dtype=np.int64) if doc_ids else np.zeros(0, dtype=np.int64))[order]
        tf = (np.frombuffer(freqs, dtype=np.int64) if freqs else np.zeros(0, dtype=np.int64))[order].astype(np.float64)
        df = np.bincount(terms, minlength=len(vocab))
        self._offsets = np.concatenate(([0], np.cumsum(df)))

        n_docs = max(len(self.documents), 1)
        avgdl = float(lengths.mean()) if len(self.documents) and lengths.sum() else 1.0
        idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        norm = self.k1 * (1 - self.b + self.b * lengths[self._postings] / avgdl)
        self._weights = np.repeat(idf, df) * tf * (self.k1 + 1) / (tf + norm)

    def compact(self) -> None:
        """Drop the documents' texts and ids and narrow the postings (int32 ids, float32 weights): a
        long-lived index over a large workspace holds its postings, not a copy of the code.
        Scores change in the float32 rounding only."""
        # Chunks of one file share one path string.
        self.documents = [d._replace(doc_id="", path=sys.intern(d.path), text="") for d in self.documents]
        self._postings = self._postings.astype(np.int32)
        self._weights = self._weights.astype(np.float32)

    def _query_terms(self, query: str) -> list[int]:
        # Each distinct query term counts once, as in Lucene's BooleanQuery of term clauses.
        seen: dict[int, None] = {}
        for token in self.tokenizer(query):
            term = self.vocabulary.get(token)
            if term is not None:
                seen[term] = None
        return list(seen)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for `query` (0 for documents sharing no term)."""
        scores = np.zeros(len(self.documents), dtype=np.float64)
        for term in self._query_terms(query):
            lo, hi = self._offsets[term], self._offsets[term + 1]
            # A term's postings name each document once, so fancy-index += is exact.
            scores[self._postings[lo:hi]] += self._weights[lo:hi]
        return scores

    def search(self, query: str, k: int = 10) -> list[ScoredDocument]:
        """Top-k documents with a positive score, best first; ties go to the earlier doc."""
        if k < 1 or not self.documents:
            return []
        scores = self.scores(query)
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > k:
            kth = np.partition(scores[candidates], len(candidates) - k)[len(candidates) - k]
            candidates = candidates[scores[candidates] >= kth]
        order = np.lexsort((candidates, -scores[candidates]))[:k]
        return [ScoredDocument(self.documents[int(i)], float(scores[i])) for i in candidates[order]]

    def search_many(self, queries: Iterable[str], k: int = 10) -> list[list[ScoredDocument]]:
        return [self.search(query, k) for query in queries]

    def idf(self, term: str) -> float:
        """idf of one (already tokenized) term; 0.0 for unknown terms. For tests and debugging."""
        index = self.vocabulary.get(term)
        if index is None:
            return 0.0
        df = int(self._offsets[index + 1] - self._offsets[index])
        return math.log1p((len(self.documents) - df + 0.5) / (df + 0.5))
