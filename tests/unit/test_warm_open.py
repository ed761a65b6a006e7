"""A warm open: the index answers (lexically, saying so) while the bundled model is still
loading in its own thread, and everything is dense again once it has loaded."""

from __future__ import annotations

from pathlib import Path

from ragls import embedding
from ragls.answer import answer
from ragls.config import Settings
from ragls.indexer import Indexer
from tests.waiting import until

SRC = '''def zq_lonely_function(width):
    """Pad a line to the given width."""
    return " " * width
'''


def test_a_warm_index_answers_while_the_model_loads(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "pad.py").write_text(SRC)
    settings = Settings.model_validate({"cacheDir": str(tmp_path / "cache")})
    first = Indexer(ws, settings)
    first.start()
    until(lambda: first.snapshot().state == "ready")
    assert first.stop(timeout=30)

    # Hold the bundled model's loader (the real lock make_embedder takes): the model cannot
    # be handed to the second indexer until the lock is released.
    with embedding._local_lock:
        idx = Indexer(ws, settings)
        idx.start()
        assert idx.ready.wait(60)
        assert idx.embedder is None
        res = answer(idx, settings.retrieval, ws, "zq_lonely_function", 5, 4000)
        assert res.error is None
        assert [c.symbol for c in res.chunks] == ["zq_lonely_function"]
        assert any("model is still loading" in w for w in res.warnings or [])
    try:
        until(lambda: idx.embedder is not None, 60)
        res = answer(idx, settings.retrieval, ws, "pad a line to a width", 5, 4000)
        assert not res.warnings
        assert res.chunks and res.chunks[0].symbol == "zq_lonely_function"
    finally:
        idx.stop(timeout=30)
