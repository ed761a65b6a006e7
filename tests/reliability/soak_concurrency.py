"""The concurrency soak (`make soak`; not part of `make test`, whose file pattern it does not
match): on a real repository (ragls's own sources and docs, copied), for RAGLS_SOAK_SECONDS
(600 in `make soak`), these run at once against one real server over stdio:

- edits on disk: files rewritten, created and deleted (the watcher's changes);
- editor buffers: opened, changed and closed;
- workspace folders: a fresh copy of a docs folder added and the previous one removed, each
  copy taking its vectors from a snapshot (`embedder.snapshot`: an import per copy);
- settings changes that rebuild every folder's index (`indexing.maxChunkChars`);
- questions (`rag/retrieve`) and status reads (`rag/indexStatus`), back to back.

Checked after every step: the status's counts add up, in total and per folder; no answer shows a
file in two versions (every chunk of a rewritten file carries its version, and a batch that
writes a file's new chunks before it deletes the old ones must not be seen half-way: the
queries' frozen view, index/view.py). At the end, once the index is ready again: every file
written last is found in its last version, no deleted file is found, and sampled files of the
repository are found by their own definitions."""

from __future__ import annotations

import asyncio
import os
import random
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.lsp_harness import Session, Starter
from tests.reliability.conftest import run_cli

SECONDS = float(os.environ.get("RAGLS_SOAK_SECONDS", "60"))
REPO = Path(__file__).resolve().parents[2]
MARKERS = 6  # files the soak rewrites on disk
VERSION = re.compile(r"soakversion(\d+)x(\d+)")


def _marker_text(i: int, v: int) -> str:
    """Four functions, each its own chunk, each naming the file and its version."""
    parts = [f"# soakfile{i}: soakversion{i}x{v}\n"]
    for k in range(4):
        parts.append(
            f"\n\ndef soak_marker_{i}_{k}(value):\n"
            f'    """Soak marker {k} of file soakfile{i}, soakversion{i}x{v}."""\n'
            + "".join(f"    value = value * {k + 2} + {n}  # soakfile{i} soakversion{i}x{v}\n" for n in range(12))
            + "    return value\n"
        )
    return "".join(parts)


def _copy_repository(dst: Path) -> None:
    for src in (REPO / "server" / "ragls").rglob("*.py"):
        out = dst / "src" / src.relative_to(REPO / "server" / "ragls")
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, out)
    shutil.copytree(REPO / "docs", dst / "docs", ignore=shutil.ignore_patterns("history"))


def _check_counts(st: dict[str, Any], where: str) -> None:
    assert st["state"] in ("indexing", "ready", "error"), (where, st["state"])
    entries = [f for f in st.get("folders") or [] if not f.get("nestedIn")] or [st]
    for f in [st, *entries]:
        lex, dense = f["lexical"], f["dense"]
        assert 0 <= dense["done"] <= lex["done"] <= lex["total"], (where, f)
        assert f["filesFailed"] == 0, (where, f)  # nothing here may fail
        assert lex["total"] + f["filesFailed"] == f["filesTotal"], (where, f)
    if len(entries) > 1:
        for key in ("filesTotal", "filesIndexed", "chunks"):
            assert st[key] == sum(f[key] for f in entries), (where, key, st)
    if st["state"] == "ready":
        assert st["lexical"]["done"] == st["lexical"]["total"] == st["dense"]["done"], (where, st)


def _check_one_version(res: dict[str, Any], where: str) -> None:
    """No file shows in two versions in one answer."""
    seen: dict[str, set[str]] = {}
    for c in res["chunks"]:
        for i, v in VERSION.findall(c["content"]):
            seen.setdefault(f"{c.get('folder', '')}/{c['path']}#{i}", set()).add(v)
    mixed = {k: v for k, v in seen.items() if len(v) > 1}
    assert not mixed, (where, mixed)


class Soak:
    def __init__(self, s: Session, ws: Path, base: Path, snapshot_src: Path, snapshot_file: Path) -> None:
        self.s, self.ws, self.base = s, ws, base
        self.snapshot_src, self.snapshot_file = snapshot_src, snapshot_file
        self.version = [0] * MARKERS
        self.deleted: set[int] = set()
        self.rng = random.Random(20261128)
        self.steps = 0
        self.copies: list[Path] = []
        self.chunk_chars = 0

    def marker(self, i: int) -> Path:
        return self.ws / "soak" / f"marker_{i}.py"

    async def check(self, where: str) -> None:
        _check_counts(await self.s.status(), where)
        self.steps += 1

    async def edits(self, until: float) -> None:
        while time.monotonic() < until:
            i = self.rng.randrange(MARKERS)
            if i in self.deleted or self.rng.random() > 0.1:
                self.version[i] += 1
                self.marker(i).write_text(_marker_text(i, self.version[i]))
                self.deleted.discard(i)
            else:
                self.marker(i).unlink(missing_ok=True)
                self.deleted.add(i)
            await self.check(f"edit {i}")
            await asyncio.sleep(self.rng.uniform(0.1, 0.6))

    async def buffers(self, until: float) -> None:
        n = 0
        while time.monotonic() < until:
            path = self.ws / "soak" / f"buffer_{n % 2}.py"
            uri = path.as_uri()
            self.s.client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    types.TextDocumentItem(uri=uri, language_id="python", version=1, text=_marker_text(100 + n % 2, 0))
                )
            )
            for v in range(1, 6):
                self.s.client.text_document_did_change(
                    types.DidChangeTextDocumentParams(
                        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=v + 1),
                        content_changes=[
                            types.TextDocumentContentChangeWholeDocument(text=_marker_text(100 + n % 2, v))
                        ],
                    )
                )
                await self.check("buffer change")
                await asyncio.sleep(self.rng.uniform(0.05, 0.4))
            self.s.client.text_document_did_close(
                types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
            )
            n += 1
            await self.check("buffer close")

    async def folders(self, until: float) -> None:
        while time.monotonic() < until:
            await asyncio.sleep(self.rng.uniform(10, 20))
            copy = self.base / f"docs-copy-{len(self.copies)}"
            shutil.copytree(self.snapshot_src, copy)
            removed = [types.WorkspaceFolder(uri=c.as_uri(), name=c.name) for c in self.copies[-1:]]
            self.s.client.workspace_did_change_workspace_folders(
                types.DidChangeWorkspaceFoldersParams(
                    event=types.WorkspaceFoldersChangeEvent(
                        added=[types.WorkspaceFolder(uri=copy.as_uri(), name=copy.name)], removed=removed
                    )
                )
            )
            self.copies.append(copy)
            await self.check("folders")

    async def settings(self, until: float) -> None:
        while time.monotonic() < until:
            await asyncio.sleep(self.rng.uniform(20, 35))
            self.chunk_chars = 0 if self.chunk_chars else 2000
            indexing: dict[str, Any] = {"debounceMs": 50, "openBufferDebounceMs": 50}
            if self.chunk_chars:
                indexing["maxChunkChars"] = self.chunk_chars
            self.s.client.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(
                    settings={"ragls": {"indexing": indexing, "embedder": {"snapshot": str(self.snapshot_file)}}}
                )
            )
            await self.check("settings")

    async def questions(self, until: float) -> None:
        words = ["invoice", "status of the index", "retry a fault", "secret scan", "chunk a file", "snapshot import"]
        while time.monotonic() < until:
            i = self.rng.randrange(MARKERS)
            res = await self.s.retrieve(f"soakfile{i} soak marker", topK=20)
            _check_one_version(res, f"marker question {i}")
            res = await self.s.retrieve(self.rng.choice(words), topK=10)
            _check_one_version(res, "question")
            await self.check("question")


async def test_concurrent_edits_folders_settings_and_questions_keep_the_invariants(
    start: Starter, tmp_path: Path, fresh_cache: Path
) -> None:
    ws = tmp_path / "repo"
    _copy_repository(ws)
    (ws / "soak").mkdir()
    docs = tmp_path / "docs-src"
    shutil.copytree(REPO / "docs", docs, ignore=shutil.ignore_patterns("history", "clients"))
    snap = tmp_path / "docs.ragls-snapshot"
    code, _out, err = run_cli(["snapshot", "export", str(docs), "-o", str(snap), "-q"], tmp_path / "export-cache")
    assert code == 0, err
    s = await start(root=ws, env={"RAGLS_CACHE_DIR": str(fresh_cache)}, init=_init(snap))
    soak = Soak(s, ws, tmp_path, docs, snap)
    for i in range(MARKERS):
        soak.version[i] = 1
        soak.marker(i).write_text(_marker_text(i, 1))
    _check_counts(await soak.s.wait_ready(300), "first index")

    until = time.monotonic() + SECONDS
    await asyncio.gather(
        soak.edits(until), soak.buffers(until), soak.folders(until), soak.settings(until), soak.questions(until)
    )

    # Quiet now: once ready, the last version of every file is what the index holds.
    st = await soak.s.wait_ready(300)
    _check_counts(st, "end")
    for i in range(MARKERS):
        res = await soak.s.retrieve(f"soakfile{i} soak marker", topK=20, paths=[f"repo/soak/marker_{i}.py"])
        versions = {v for c in res["chunks"] for j, v in VERSION.findall(c["content"]) if int(j) == i}
        if i in soak.deleted:
            assert not res["chunks"], (i, res["chunks"])
        else:
            assert versions == {str(soak.version[i])}, (i, versions, soak.version[i])
    sample = soak.rng.sample(sorted((ws / "src").rglob("*.py")), 20)
    for path in sample:
        names = re.findall(r"^def ([a-z_][a-z0-9_]{6,})\(", path.read_text(), re.M)
        if not names:
            continue
        rel = f"repo/{path.relative_to(ws).as_posix()}"
        res = await soak.s.retrieve(names[0], topK=10, paths=[rel])
        assert res["chunks"], (rel, names[0])
    print(
        f"soak: {SECONDS:.0f}s, {soak.steps} steps checked, {len(soak.copies)} folder copies, versions {soak.version}"
    )


def _init(snap: Path) -> dict[str, Any]:
    return {"indexing": {"debounceMs": 50, "openBufferDebounceMs": 50}, "embedder": {"snapshot": str(snap)}}


pytestmark = pytest.mark.slow
