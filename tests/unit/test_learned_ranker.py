"""The learned ranker (query.learned, query.ranker, query.features) on a real index with the real
model: the model's weights decide the order, a training trace sees every candidate with its row
and grade, and a model file trained on other features is refused."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ragls.config import Settings
from ragls.evaluation.golden import GoldenQuery
from ragls.evaluation.ranker_data import FeatureDump, grade
from ragls.index.worker import Indexer
from ragls.query.features import FEATURES, QueryKind
from ragls.query.query_words import query_kind
from ragls.query.ranker import LinearRanker
from ragls.query.retrieval import DEFAULT_TUNING, Ask, Sources, retrieve
from tests.waiting import until

FILES = {
    "billing/invoice.py": 'def invoice_total(lines):\n    """Sum the amounts of an invoice\'s lines."""\n'
    "    return sum(line.amount for line in lines)\n",
    "billing/tax.py": "def vat_for(amount, rate):\n    # value added tax on a net amount\n    return amount * rate\n",
    "tests/test_invoice.py": "def test_invoice_total():\n    assert invoice_total([]) == 0\n",
}


def _model(tmp_path: Path, name: str, **weights: float) -> str:
    w = np.zeros(len(FEATURES), dtype=np.float32)
    for feature, value in weights.items():
        w[FEATURES.index(feature)] = value
    path = tmp_path / f"{name}.json"  # models are cached by path
    LinearRanker(w).save(path, trained_on="test")
    return str(path)


def test_the_models_weights_decide_the_order_and_a_trace_sees_every_candidate(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for rel, text in FILES.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    settings = Settings.model_validate({"cacheDir": str(tmp_path / "cache"), "indexing": {"watch": False}})
    idx = Indexer(ws, settings)
    idx.start()
    try:
        until(lambda: idx.snapshot().state == "ready", 120)
        h = idx.handle
        assert h.store is not None

        def ask(tuning, **kw):  # type: ignore[no-untyped-def]
            index = Sources(h.store, h.embedder, names=h.cache)
            res = retrieve(index, settings.retrieval, Ask("sum of an invoice", 10, 0, tuning=tuning), **kw)
            return [x.path for x in res.hits]

        ruled = ask(DEFAULT_TUNING)
        assert ruled[0] == "billing/invoice.py"
        # A model that likes test files puts the test first; one that dislikes them, last.
        likes = ask(
            replace(DEFAULT_TUNING, learned=True, ranker_path=_model(tmp_path, "likes", test=10.0, dense_rr5=1.0))
        )
        assert likes[0] == "tests/test_invoice.py"
        dislikes = ask(
            replace(DEFAULT_TUNING, learned=True, ranker_path=_model(tmp_path, "dislikes", test=-10.0, dense_rr5=1.0))
        )
        assert dislikes[-1] == "tests/test_invoice.py" and dislikes[0] == "billing/invoice.py", dislikes
        # A training trace: every candidate once, its row, its grade against the answer.
        q = GoldenQuery(
            id="q", query="sum of an invoice", files=["billing/invoice.py"], symbols=["invoice_total"], lines=[[1, 3]]
        )
        dump = FeatureDump()
        ask(DEFAULT_TUNING, trace=dump.tracer(q))
        rows, grades = dump.rows[0], dump.grades[0]
        assert rows.shape == (len(grades), len(FEATURES)) and len(grades) >= 3
        assert sorted(grades.tolist())[-1] == 2 and (grades == 0).sum() >= 2
    finally:
        idx.stop()


def test_grades_reward_the_answers_own_chunk() -> None:
    q = GoldenQuery(id="q", query="x", files=["a.py"], symbols=["f"], lines=[[10, 20]])
    assert grade("a.py", 10, 20, q) == 2  # the function itself
    assert grade("a.py", 1, 100, q) == 1  # a class or window around it: costs the budget
    assert grade("a.py", 30, 40, q) == 0 and grade("b.py", 10, 20, q) == 0


def test_query_kind_reads_the_query(tmp_path: Path) -> None:
    k = query_kind("where is parseHeader defined", change=False)
    assert isinstance(k, QueryKind) and k.lookup and not k.prose and not k.long
    k = query_kind("Returns the tests that ran", change=True)
    assert k.prose and k.asks_tests and k.change


def test_a_model_of_other_features_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text('{"features": ["dense_rr5"], "weights": [1.0]}')
    with pytest.raises(ValueError, match="other features"):
        LinearRanker.load(path)
