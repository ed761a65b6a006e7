"""Files skipped for their content (minified, binary, generated) are kept in the manifest with
the size and mtime they were read at: a restart does not read them again while unchanged, and
reads them as soon as either changes."""

from __future__ import annotations

import os
from pathlib import Path

from ragls.config import Settings
from ragls.index.apply import _SKIP_RULES
from ragls.index.worker import Indexer
from tests.waiting import until

MINIFIED = "var a=" + "1+" * 3000 + "1;\n"  # one 6,000-character line


def _run(ws: Path, settings: Settings) -> Indexer:
    idx = Indexer(ws, settings)
    idx.start()
    until(lambda: idx.snapshot().state == "ready")
    return idx


def test_a_content_skip_is_not_read_again_until_the_file_changes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "good.py").write_text("def kept_function():\n    return 1\n")
    bundle = ws / "bundle.js"
    bundle.write_text(MINIFIED)
    settings = Settings.model_validate({"cacheDir": str(tmp_path / "cache")})

    idx = _run(ws, settings)
    assert idx.state.skipped_paths.get("bundle.js") == "minified" and "good.py" in idx.state.records
    assert idx.state.known_skips["bundle.js"].reason == "minified"
    assert idx.stop(timeout=30)

    # New content of the same size with the old mtime: the scan's test (size, mtime) sees no
    # change, exactly as for an indexed file, so the file is not read and stays skipped.
    st = bundle.stat()
    readable = "function zq_unminified() {\n  return 1;\n}\n"
    filler = len(MINIFIED) - len(readable)
    bundle.write_text(readable + ("//" + "x" * 77 + "\n") * (filler // 80) + "/" * (filler % 80 - 1) + "\n")
    assert bundle.stat().st_size == st.st_size
    os.utime(bundle, ns=(st.st_atime_ns, st.st_mtime_ns))
    idx = _run(ws, settings)
    assert idx.state.skipped_paths.get("bundle.js") == "minified", idx.state.skipped_paths
    assert "bundle.js" not in idx.state.records
    assert idx.snapshot().skipped_by_reason.get("minified") == 1
    assert idx.stop(timeout=30)

    # A new mtime: read again, now indexed, and no longer kept as skipped.
    os.utime(bundle, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    idx = _run(ws, settings)
    try:
        assert "bundle.js" in idx.state.records and "bundle.js" not in idx.state.skipped_paths
        assert "bundle.js" not in idx.state.known_skips and idx.handle.manifest is not None
        assert idx.handle.manifest.skipped(_SKIP_RULES) == {}
    finally:
        assert idx.stop(timeout=30)


def test_a_deleted_skipped_file_is_forgotten(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "good.py").write_text("def kept_function():\n    return 1\n")
    (ws / "bundle.js").write_text(MINIFIED)
    settings = Settings.model_validate({"cacheDir": str(tmp_path / "cache")})
    assert _run(ws, settings).stop(timeout=30)
    (ws / "bundle.js").unlink()
    idx = _run(ws, settings)
    try:
        assert "bundle.js" not in idx.state.skipped_paths and idx.state.known_skips == {}
        assert idx.handle.manifest is not None and idx.handle.manifest.skipped(_SKIP_RULES) == {}
    finally:
        assert idx.stop(timeout=30)


def test_kept_skips_are_dropped_when_the_content_checks_change(tmp_path: Path) -> None:
    from ragls.store.manifest import Manifest, SkippedFile

    m = Manifest(tmp_path / "manifest.sqlite")
    try:
        assert m.skipped("content checks 1") == {}
        m.set_skipped({"a.js": SkippedFile(10, 20, "minified")})
        assert m.skipped("content checks 1") == {"a.js": SkippedFile(10, 20, "minified")}
        assert m.skipped("content checks 2") == {}  # other checks: read every file again
        assert m.skipped("content checks 2") == {}
        m.set_skipped({"b.bin": SkippedFile(1, 2, "binary")})
        m.forget_skipped(["b.bin", "never-kept.js"])
        assert m.skipped("content checks 2") == {}
    finally:
        m.close()
