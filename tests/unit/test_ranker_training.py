"""scripts/ranker/train.py on dumps made by ranker_data: the fit finds the signal that tells the
answers apart, and the model it writes loads and ranks them first."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from ragls.evaluation.ranker_data import FeatureDump
from ragls.query.features import FEATURES
from ragls.query.ranker import LinearRanker

TRAIN = Path(__file__).resolve().parents[2] / "scripts" / "ranker" / "train.py"


def _trainer():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("ranker_train", TRAIN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_fit_finds_the_signal_and_ships_a_loadable_model(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    signal, noise = FEATURES.index("name_sim"), FEATURES.index("sparse_rr5")
    for lang in ("python", "go"):
        dump = FeatureDump()
        for _ in range(40):
            rows = rng.random((30, len(FEATURES))).astype(np.float32)
            answer = int(rng.integers(30))
            rows[answer, signal] += 1.0  # the answer's name is the most similar
            dump.rows.append(rows)
            dump.grades.append(np.where(np.arange(30) == answer, 2, 0).astype(np.int8))
            dump.groups.append(np.full(30, len(dump.groups), dtype=np.int32))
        dump.save(tmp_path / f"{lang}.npz", lang, lang)
    out = tmp_path / "ranker.json"
    assert _trainer().main([str(tmp_path / "python.npz"), str(tmp_path / "go.npz"), "--out", str(out)]) == 0
    model = LinearRanker.load(out)
    assert model.weights[signal] > 5 * abs(model.weights[noise])
    rows = rng.random((10, len(FEATURES))).astype(np.float32)
    rows[7, signal] += 1.0
    assert int(np.argmax(model.scores(rows))) == 7
