"""Asked-for first (ragls/ingest/seek.py): mid-pass, a file that spells a name a question asked for
is indexed at the next batch boundary, not at the end of the pass; so is a file the editor
opens (a change, which the pass handles at its next boundary)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ragls.config import Settings
from ragls.index.worker import Indexer
from ragls.ingest.seek import bare_name, files_naming
from ragls.query.answer import answer

PY = '''"""Module {i}."""


def helper_{i}(value):
    """Scale a value by {i}."""
    return value * {i}


class Widget{i}:
    def render_{i}(self, width: int) -> str:
        return "x" * width
'''

TARGET = '''"""The one file a question asks about."""


def zq_rare_target(width):
    return width + 1
'''

N_FILES = 1200


def _workspace(root: Path) -> Path:
    """N_FILES modules; the target is the oldest file, so the pass (newest first) reaches it last."""
    for i in range(N_FILES):
        d = root / f"pkg{i % 8}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod_{i}.py").write_text(PY.format(i=i))
    target = root / "pkg0" / "zz_target.py"
    target.write_text(TARGET)
    os.utime(target, ns=(1_000_000_000, 1_000_000_000))
    return target


def _run_until(idx: Indexer, target: str, act) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Start, `act` once the first batch is stored, then poll: (files still waiting when the
    target was indexed, files in the pass)."""
    idx.start()
    assert idx.handle.ready.wait(60)
    deadline = time.monotonic() + 120
    acted = False
    total = 0
    while time.monotonic() < deadline:
        if not acted and idx.state.batches >= 1:
            total = idx.snapshot().lexical.total
            act()
            acted = True
        if acted and target in idx.state.records:
            return len(idx.state.pending), total
        time.sleep(0.002)
    raise AssertionError(f"{target} never indexed: {idx.snapshot()}")


def test_files_naming_matches_any_case_most_mentions_first(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def parse_header(): pass\n")
    (tmp_path / "b.py").write_text("PARSE_HEADER = 1\nparse_header(parse_header)\n")
    (tmp_path / "c.py").write_text("nothing here\n")
    os.mkfifo(tmp_path / "d.py")  # replaced by a FIFO since discovery: passed over, never blocks
    paths = ["a.py", "b.py", "c.py", "d.py", "gone.py"]  # a vanished file is passed over
    assert files_naming(tmp_path, paths, ["parse_header"], 1 << 20) == ["b.py", "a.py"]
    assert files_naming(tmp_path, paths, ["mod.Parse_Header"], 1 << 20, limit=1) == ["b.py"]
    assert files_naming(tmp_path, paths, ["absent_name"], 1 << 20) == []
    assert bare_name("pkg::Type::method") == "method" and bare_name("Invoice.total") == "total"


def test_a_name_asked_mid_pass_sends_its_file_ahead(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    target = _workspace(ws)
    settings = Settings.model_validate({"cacheDir": str(tmp_path / "cache")})
    idx = Indexer(ws, settings)
    try:
        # A question as the server answers it (the first answer comes before the file is in).
        ask = lambda: answer(idx.handle, settings.retrieval, ws, "where is zq_rare_target defined", 5, 4000)  # noqa: E731
        waiting, total = _run_until(idx, "pkg0/zz_target.py", ask)
        # In pass order the target would be the last file (waiting == 0 when it is stored).
        assert total > N_FILES
        assert waiting > N_FILES // 2, (waiting, total)
        assert idx.seeker.searches == 1
        idx.seek(["zq_rare_target"])  # sought once per pass
        assert idx.handle.store is not None and idx.handle.store.by_symbol(["zq_rare_target"], 5)
    finally:
        idx.stop(timeout=30)
    assert target.exists()


def test_a_file_opened_mid_pass_is_indexed_before_the_rest(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    target = _workspace(ws)
    idx = Indexer(ws, Settings.model_validate({"cacheDir": str(tmp_path / "cache")}))
    try:
        text = target.read_text()
        waiting, _ = _run_until(idx, "pkg0/zz_target.py", lambda: idx.set_buffer("pkg0/zz_target.py", text))
        assert waiting > N_FILES // 2, waiting
        assert idx.seeker.searches == 0
    finally:
        idx.stop(timeout=30)
