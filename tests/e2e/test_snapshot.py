"""Index snapshots end to end (docs/scaling.md): `ragls snapshot export` on one cache, the real
server on a fresh cache with `embedder.snapshot` (a file, or a URL on a real HTTP server on
127.0.0.1) embeds nothing and answers as the cold index does; edits are embedded as usual; a
snapshot of another model, a corrupted one and hostile ones are refused with a clear status."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragls.chunking.model import EMBED_FORMAT
from ragls.embedding.bundled import DIMENSION, model_id
from ragls.embedding.cache import EmbeddingCache
from ragls.embedding.snapshot import MAGIC, Identity, SnapshotError, SnapshotMismatch, read, write
from ragls.name_rerank import NAME_KEY
from tests.lsp_harness import Session, Starter

QUERIES = ("calculate the invoice total including tax", "parse a configuration file", "retry with backoff")


def _ragls(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RAGLS_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "ragls", *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The fixture workspace indexed cold on its own cache, and its snapshot."""
    from tests.conftest import FIXTURE

    base = tmp_path_factory.mktemp("snap")
    ws, cache = base / "ws", base / "cold-cache"
    shutil.copytree(FIXTURE, ws)
    out = base / "ws.ragls-snapshot"
    r = _ragls("snapshot", "export", str(ws), "-o", str(out), "-q", cache=cache)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["missing"] == 0 and report["vectors"] == report["unique"] > 10
    assert report["bytesPerChunk"] <= 1024
    return ws, cache, out


def _cache(path: Path) -> EmbeddingCache:
    return EmbeddingCache(path / "embeddings.sqlite", model_id(), DIMENSION)


async def _answers(s: Session) -> list[list[tuple[str, int]]]:
    out = []
    for q in QUERIES:
        res = await s.retrieve(q, topK=8)
        out.append([(c["path"], c["range"]["start"]["line"]) for c in res["chunks"]])
    return out


def _same_answers(got: list[list[tuple[str, int]]], cold: list[list[tuple[str, int]]]) -> None:
    """The snapshot's int8 vectors are within 0.9999 cosine of the cold ones (checked below), not
    equal: a near-tie deeper in a list can swap, and RRF fusion then moves it a rank or two. So:
    the same first hit for every question, and nearly the same top 8."""
    for q, a, b in zip(QUERIES, got, cold, strict=True):
        assert a[:1] == b[:1], (q, a, b)
        assert len(set(a) & set(b)) >= len(b) - 2, (q, a, b)
    shared = sum(len(set(a) & set(b)) for a, b in zip(got, cold, strict=True))
    assert shared >= 0.9 * sum(len(b) for b in cold), (got, cold)


async def test_a_fresh_cache_takes_every_vector_from_the_snapshot(
    start: Starter, exported: tuple[Path, Path, Path], fresh_cache: Path, tmp_path: Path
) -> None:
    ws, cold_cache, snap_file = exported
    cold = await start(ws, env={"RAGLS_CACHE_DIR": str(cold_cache)})
    cold_status = await cold.wait_ready()
    cold_answers = await _answers(cold)
    await cold.close()

    s = await start(ws, init={"embedder": {"snapshot": str(snap_file)}}, env={"RAGLS_CACHE_DIR": str(fresh_cache)})
    st = await s.wait_ready()
    assert st["embedded"] == 0, "a chunk was embedded although the snapshot held its vector"
    assert st["snapshot"]["state"] == "imported" and st["snapshot"]["reused"] == st["chunks"] == cold_status["chunks"]
    _same_answers(await _answers(s), cold_answers)

    # The vectors themselves: int8 in the file, within 1e-4 cosine of the cold ones.
    snap = read(snap_file)
    old, new = _cache(cold_cache), _cache(fresh_cache)
    try:
        a, b = old.get_many(snap.hashes, count=False), new.get_many(snap.hashes, count=False)
        assert a.keys() == b.keys() == set(snap.hashes)
        cos = [float(np.dot(a[h], b[h]) / np.linalg.norm(b[h])) for h in snap.hashes]
        assert min(cos) > 0.9999
        names = new.get_many([NAME_KEY + h for h in snap.hashes], count=False)
        assert len(names) == len(snap.hashes)  # the name rerank works at once too
    finally:
        old.close()
        new.close()


async def test_edited_files_are_embedded_the_rest_comes_from_the_snapshot(
    start: Starter, exported: tuple[Path, Path, Path], fresh_cache: Path, tmp_path: Path
) -> None:
    _, _, snap_file = exported
    from tests.conftest import FIXTURE

    ws = tmp_path / "edited"
    shutil.copytree(FIXTURE, ws)
    (ws / "brand_new.py").write_text("def freshly_written_helper(x):\n    return x * 41 + 1\n")
    s = await start(ws, init={"embedder": {"snapshot": str(snap_file)}}, env={"RAGLS_CACHE_DIR": str(fresh_cache)})
    st = await s.wait_ready()
    assert st["embedded"] >= 1 and st["snapshot"]["reused"] == st["chunks"] - st["embedded"]
    assert st["snapshot"]["reused"] > 10


async def test_a_snapshot_from_a_url_is_downloaded_and_used(
    start: Starter, exported: tuple[Path, Path, Path], fresh_cache: Path
) -> None:
    ws, _, snap_file = exported
    with _serve(snap_file.parent) as (url, requests):
        s = await start(
            ws,
            init={"embedder": {"snapshot": f"{url}/{snap_file.name}"}},
            env={"RAGLS_CACHE_DIR": str(fresh_cache)},
        )
        st = await s.wait_ready()
    assert requests and st["embedded"] == 0 and st["snapshot"]["state"] == "imported"


@pytest.mark.parametrize("problem", ["other-model", "corrupted", "not-a-snapshot", "missing"])
async def test_an_unusable_snapshot_is_refused_and_indexing_goes_on(
    start: Starter, exported: tuple[Path, Path, Path], fresh_cache: Path, tmp_path: Path, problem: str
) -> None:
    ws, _, snap_file = exported
    bad = tmp_path / "bad.snapshot"
    if problem == "other-model":
        snap = read(snap_file)
        write(
            bad,
            Identity("someone-elses-model", DIMENSION, EMBED_FORMAT),
            dict(zip(snap.hashes, snap.vectors, strict=True)),
        )
    elif problem == "corrupted":
        data = bytearray(snap_file.read_bytes())
        data[-100] ^= 0x40
        bad.write_bytes(bytes(data))
    elif problem == "not-a-snapshot":
        bad.write_text("{}")
    s = await start(ws, init={"embedder": {"snapshot": str(bad)}}, env={"RAGLS_CACHE_DIR": str(fresh_cache)})
    st = await s.wait_ready()
    expected = {
        "other-model": "someone-elses-model",
        "corrupted": "checksum",
        "not-a-snapshot": "not a ragls snapshot",
        "missing": "cannot read snapshot",
    }[problem]
    assert st["snapshot"]["state"] == "failed" and expected in st["snapshot"]["message"], st["snapshot"]
    assert st["embedded"] == st["chunks"] and st["snapshot"]["reused"] == 0  # embedded as without one


def test_the_cli_imports_into_a_fresh_cache(exported: tuple[Path, Path, Path], fresh_cache: Path) -> None:
    ws, _, snap_file = exported
    r = _ragls("snapshot", "import", str(snap_file), str(ws), cache=fresh_cache)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["imported"] == read(snap_file).__len__()
    r = _ragls("index", str(ws), "-q", cache=fresh_cache)
    assert r.returncode == 0 and json.loads(r.stdout)["embedded"] == 0
    bad = fresh_cache / "x.snapshot"
    bad.write_bytes(b"nonsense")
    r = _ragls("snapshot", "import", str(bad), str(ws), cache=fresh_cache)
    assert r.returncode != 0 and "not a ragls snapshot" in r.stderr


# -- hostile files: parsed, bounded, never executed ------------------------------------------


def _hostile(path: Path, header: dict[str, Any] | bytes, body: bytes = b"") -> Path:
    head = header if isinstance(header, bytes) else json.dumps(header).encode()
    path.write_bytes(MAGIC + struct.pack("<I", len(head)) + head + body)
    return path


def _header(**over: Any) -> dict[str, Any]:
    h = {
        "format": 1,
        "model": model_id(),
        "dimension": DIMENSION,
        "embed_format": EMBED_FORMAT,
        "quantization": "int8",
        "vectors": 1,
        "names": 0,
        "sha256": "0" * 64,
    }
    h.update(over)
    return h


@pytest.mark.parametrize(
    "case",
    ["huge-header", "header-not-json", "header-wrong-types", "extra-key", "count-past-the-end", "nan-scale", "pickle"],
)
def test_hostile_snapshots_are_refused(tmp_path: Path, case: str) -> None:
    p = tmp_path / "h.snapshot"
    one = b"\x01" * 16 + struct.pack("<f", float("nan")) + b"\x00" * DIMENSION
    if case == "huge-header":
        p.write_bytes(MAGIC + struct.pack("<I", 2**31) + b"{}")
    elif case == "header-not-json":
        _hostile(p, b"\xff\xfe not json")
    elif case == "header-wrong-types":
        _hostile(p, _header(vectors="1; rm -rf /"))
    elif case == "extra-key":
        _hostile(p, _header(__class__="os.system"))
    elif case == "count-past-the-end":
        _hostile(p, _header(vectors=10**9), one)
    elif case == "nan-scale":
        import hashlib

        _hostile(p, _header(sha256=hashlib.sha256(one).hexdigest()), one)
    else:
        import pickle

        p.write_bytes(pickle.dumps({"vectors": [1, 2, 3]}))
    with pytest.raises(SnapshotError):
        read(p, Identity(model_id(), DIMENSION, EMBED_FORMAT))


def test_size_limit_and_identity_are_checked_before_anything_is_read(exported: tuple[Path, Path, Path]) -> None:
    _, _, snap_file = exported
    with pytest.raises(SnapshotError, match="over the limit"):
        read(snap_file, max_bytes=100)
    with pytest.raises(SnapshotMismatch, match="this index uses"):
        read(snap_file, Identity(model_id(), DIMENSION, "999"))


@contextmanager
def _serve(folder: Path) -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on 127.0.0.1 serving `folder`; yields its URL and the paths asked."""
    requests: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, directory=str(folder), **kw)

        def do_GET(self) -> None:
            requests.append(self.path)
            super().do_GET()

        def log_message(self, *_a: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()
