"""Fitting the learned ranker's weights (query.ranker.LinearRanker): shared by the offline
training on the golden sets (scripts/ranker/train.py) and the per-folder tuning from a user's
ratings (feedback.tuning), so both fit the same model the same way.

A pairwise logistic model (RankNet with a linear scorer): for each pair (better, worse) of
candidates of one question, the better should outscore the worse. Features are standardised for
the fit and the scale folded back into the weights, so the result scores raw rows. Full-batch
Adam in numpy with an L2 penalty that draws the weights towards `start` (zero unless given): a few
seconds for a hundred thousand pairs on 2 cores, milliseconds for a user's few hundred."""

from __future__ import annotations

import numpy as np


def fit(
    x: np.ndarray,
    better: np.ndarray,
    worse: np.ndarray,
    weight: np.ndarray,
    l2: float,
    steps: int,
    start: np.ndarray | None = None,
) -> np.ndarray:
    """Raw-row weights (one per column of `x`) from pairs of row indices into `x` and each pair's
    weight. `start`: raw-row weights to begin from and be drawn back to (a model to adjust, not
    to replace); None: zeros."""
    mean, std = x.mean(axis=0), x.std(axis=0)
    std[std == 0] = 1.0
    z = (x - mean) / std
    diff = z[better] - z[worse]
    # In standardised units: a raw weight w scores a standardised column as w * std.
    prior = np.zeros(x.shape[1]) if start is None else np.asarray(start, dtype=np.float64) * std
    w = prior.copy()
    m, v = np.zeros_like(w), np.zeros_like(w)
    lr, b1, b2 = 0.05, 0.9, 0.999
    for t in range(1, steps + 1):
        margin = diff @ w
        p = 1.0 / (1.0 + np.exp(np.clip(margin, -50, 50)))  # d/dmargin of log(1 + e^-margin), negated
        grad = -(diff * (weight * p)[:, None]).sum(axis=0) + 2 * l2 * (w - prior)
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad**2
        w -= lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + 1e-9)
    return w / std  # raw-row weights (the mean only shifts every score of a question alike)
