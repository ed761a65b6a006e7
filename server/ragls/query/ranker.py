"""The learned ranker: a linear model over query.features' rows, trained on the dev splits of
the three tasks (scripts/ranker/train.py) and shipped as a small JSON file beside this module.
Scoring is one matrix-vector product (microseconds for a hundred candidates), pure numpy."""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragls.query.features import FEATURES

BUNDLED = Path(__file__).with_name("ranker.json")


@dataclass(frozen=True)
class LinearRanker:
    weights: np.ndarray  # one per FEATURES entry
    trained_on: str = ""

    @classmethod
    def load(cls, path: Path) -> LinearRanker:
        """Raises OSError, or ValueError for a file that is not a model of today's FEATURES."""
        data = json.loads(path.read_text(encoding="utf-8"))
        try:
            names = data["features"]
            if tuple(names) != FEATURES:
                raise ValueError(f"{path}: trained on other features ({len(names)}); retrain (scripts/ranker/train.py)")
            weights = np.asarray(data["weights"], dtype=np.float32)
        except (KeyError, TypeError) as exc:  # a JSON file of another shape
            raise ValueError(f"{path}: not a ranker model ({exc})") from exc
        if weights.shape != (len(FEATURES),) or not np.isfinite(weights).all():
            raise ValueError(f"{path}: not a ranker model (weights)")
        return cls(weights, str(data.get("trained_on", "")))

    def to_json(self, trained_on: str, **extra: object) -> str:
        """The model file's text; `extra` keys are kept beside the model (load ignores them)."""
        data = {
            "features": list(FEATURES),
            "weights": [round(float(w), 6) for w in self.weights],
            "trained_on": trained_on,
            **extra,
        }
        return json.dumps(data, indent=1) + "\n"

    def save(self, path: Path, trained_on: str) -> None:
        path.write_text(self.to_json(trained_on), encoding="utf-8")

    def scores(self, rows: np.ndarray) -> np.ndarray:
        return rows @ self.weights


def squash(score: float) -> float:
    """A model score as a hit's score in (0, 1): ordered alike, comparable across folders (the
    same model over rank features), positive like the RRF scores it replaces."""
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, score))))


@functools.cache
def bundled() -> LinearRanker | None:
    return LinearRanker.load(BUNDLED) if BUNDLED.is_file() else None
