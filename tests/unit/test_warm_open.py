"""A warm open: the index answers (lexically, saying so) while the bundled model is still
loading in its own thread, and everything is dense again once it has loaded; a model that
does not load leaves lexical search working and says why."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragls import embedding
from ragls.config import Settings
from ragls.embedding import onnx_local
from ragls.index.worker import Indexer
from ragls.query.answer import answer
from tests.waiting import until

SRC = '''def zq_lonely_function(width):
    """Pad a line to the given width."""
    return " " * width
'''


def _folder(tmp_path: Path) -> tuple[Path, Settings]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "pad.py").write_text(SRC)
    return ws, Settings.model_validate({"cacheDir": str(tmp_path / "cache")})


def test_a_warm_index_answers_while_the_model_loads(tmp_path: Path) -> None:
    ws, settings = _folder(tmp_path)
    first = Indexer(ws, settings)
    first.start()
    until(lambda: first.snapshot().state == "ready")
    assert first.stop(timeout=30)

    # Hold the bundled model's loader (the real lock make_embedder takes): the model cannot
    # be handed to the second indexer until the lock is released.
    with embedding._local_lock:
        idx = Indexer(ws, settings)
        idx.start()
        assert idx.handle.ready.wait(60)
        assert idx.handle.embedder is None
        res = answer(idx.handle, settings.retrieval, ws, "zq_lonely_function", 5, 4000)
        assert res.error is None
        assert [c.symbol for c in res.chunks] == ["zq_lonely_function"]
        assert any("model is still loading" in w for w in res.warnings or [])
        # Every file is searchable lexically, and the status says the dense half is coming.
        st = idx.snapshot()
        assert (st.state, st.phase, st.lexical.done, st.lexical.total) == ("indexing", "dense", 1, 1)
        assert idx.busy()
    try:
        until(lambda: idx.handle.embedder is not None, 60)
        until(lambda: idx.snapshot().state == "ready")
        res = answer(idx.handle, settings.retrieval, ws, "pad a line to a width", 5, 4000)
        assert not res.warnings
        assert res.chunks and res.chunks[0].symbol == "zq_lonely_function"
    finally:
        idx.stop(timeout=30)


def _break_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "model"
    broken.mkdir()
    shutil.copy(onnx_local.MODEL_DIR / "tokenizer.json", broken)
    (broken / "model.onnx").write_bytes(b"not an ONNX model")  # ONNX Runtime itself refuses it
    monkeypatch.setattr(onnx_local, "MODEL_DIR", broken)
    monkeypatch.setattr(embedding, "_local", {})  # no model loaded by an earlier test


def test_a_model_that_does_not_load_leaves_lexical_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _break_the_model(tmp_path, monkeypatch)
    ws, settings = _folder(tmp_path)
    idx = Indexer(ws, settings)
    idx.start()
    try:
        # The model's loader thread and the lexical pass run side by side, and the worker turns
        # the load error into a fault only at its next dense step: wait for the three.
        def settled() -> bool:
            st = idx.snapshot()
            failed = any("cannot load the embedding model" in e.message for e in st.errors)
            return idx.handle.model_error is not None and st.lexical.done == 1 and failed

        until(settled, 60)
        res = answer(idx.handle, settings.retrieval, ws, "zq_lonely_function", 5, 4000)
        assert res.error is None and [c.symbol for c in res.chunks] == ["zq_lonely_function"]
        assert any("could not be loaded" in w for w in res.warnings or [])
        assert idx.snapshot().dense.done == 0
        # The dense pass tries again and says so (a fault retried with backoff), not a crash.
        until(lambda: idx.snapshot().phase == "waiting", 60)
        message = idx.snapshot().message or ""
        assert message.startswith("cannot load the embedding model: ") and "retrying at" in message, message
    finally:
        idx.stop(timeout=30)


def test_a_fully_embedded_index_says_when_its_model_does_not_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing left to embed, so no dense pass to fail: the status still may not say `ready`
    while every question is answered lexically."""
    ws, settings = _folder(tmp_path)
    first = Indexer(ws, settings)
    first.start()
    until(lambda: first.snapshot().state == "ready")
    assert first.stop(timeout=30)
    _break_the_model(tmp_path, monkeypatch)
    idx = Indexer(ws, settings)
    idx.start()
    try:
        until(lambda: idx.snapshot().phase == "paused", 60)
        st = idx.snapshot()
        assert st.state == "error" and st.dense.done == st.dense.total == 1
        assert (st.message or "").startswith("the embedding model could not be loaded (")
        res = answer(idx.handle, settings.retrieval, ws, "zq_lonely_function", 5, 4000)
        assert [c.symbol for c in res.chunks] == ["zq_lonely_function"]
        assert any("could not be loaded" in w for w in res.warnings or [])
    finally:
        idx.stop(timeout=30)
