"""Training data for the learned ranker (query.ranker): every candidate a real retrieval gathers
for a golden question, its feature row (query.features, the rows the server ranks by) and its
grade against the answer: 2 for a chunk that lies at least half inside an answer (what the
precise metrics and the context budget reward), 1 for one that overlaps it, 0 otherwise.
`ragls eval --dump-features DIR` writes one `.npz` per set; scripts/ranker/train.py fits the model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from ragls.evaluation.golden import GoldenQuery
from ragls.evaluation.metrics import overlap
from ragls.query.features import FEATURES, QueryKind, Signals


def grade(path: str, start: int, end: int, q: GoldenQuery) -> int:
    best = 0
    for gold_path, lines in q.answers():
        if path != gold_path:
            continue
        if lines is None:
            return 2  # a file-level answer: any chunk of the file
        shared = overlap((start, end), lines)
        if shared > 0:
            best = max(best, 2 if shared / (end - start + 1) >= 0.5 else 1)
    return best


class FeatureDump:
    """Collects (rows, grades) per question; `save` writes them with a question id per row."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.grades: list[np.ndarray] = []
        self.groups: list[np.ndarray] = []
        self._n = 0

    def tracer(self, q: GoldenQuery) -> Callable[[QueryKind, list[Signals], np.ndarray], None]:
        """A retrieval trace (query.learned.Trace) that grades the candidates against `q`."""

        def trace(kind: QueryKind, signals: list[Signals], rows: np.ndarray) -> None:
            del kind
            grades = [grade(s.path, s.start_line, s.end_line, q) for s in signals]
            self.rows.append(rows)
            self.grades.append(np.asarray(grades, dtype=np.int8))
            self.groups.append(np.full(len(signals), self._n, dtype=np.int32))
            self._n += 1

        return trace

    def save(self, path: Path, name: str, language: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        empty = np.zeros((0, len(FEATURES)), dtype=np.float32)
        np.savez_compressed(
            path,
            rows=np.concatenate(self.rows) if self.rows else empty,
            grades=np.concatenate(self.grades) if self.grades else np.zeros(0, dtype=np.int8),
            groups=np.concatenate(self.groups) if self.groups else np.zeros(0, dtype=np.int32),
            features=np.asarray(FEATURES),
            name=np.asarray(name),
            language=np.asarray(language),
        )
