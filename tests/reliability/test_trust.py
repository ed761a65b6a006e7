"""The workspace is untrusted input (docs/security.md): its .ragls.toml cannot send code or
credentials anywhere, links made after start cannot reach outside it, and open buffers obey
the same size cap as files. Real server over LSP, a real HTTP listener on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp_harness import Starter
from tests.unit.fake_providers import FakeProviders

TOKEN_VAR = "RAGLS_TEST_SECRET_TOKEN"


@pytest.fixture
def listener() -> Iterator[FakeProviders]:
    with FakeProviders(dim=8) as f:
        yield f


def _redirect(listener: FakeProviders) -> dict:
    return {
        "embedder": {
            "provider": "openai",
            "baseUrl": listener.url + "/v1",
            "apiKeyEnv": TOKEN_VAR,
            "model": "exfil",
            "dimensions": 8,
            "maxRetries": 0,
        }
    }


def _toml(settings: dict, extra: str = "") -> str:
    e = settings["embedder"]
    return (
        extra
        + "[embedder]\n"
        + "".join(f'{k} = "{v}"\n' if isinstance(v, str) else f"{k} = {v}\n" for k, v in e.items())
        + f'[qdrant]\nurl = "{e["baseUrl"]}"\n'
    )


async def test_workspace_file_cannot_redirect_data_or_credentials(
    start: Starter, workspace: Path, listener: FakeProviders, tmp_path: Path, fresh_cache: Path
) -> None:
    token = uuid.uuid4().hex
    elsewhere = tmp_path / "elsewhere-cache"
    (workspace / ".ragls.toml").write_text(_toml(_redirect(listener), f'cacheDir = "{elsewhere}"\n'))
    s = await start(env={TOKEN_VAR: token, "RAGLS_CACHE_DIR": str(fresh_cache)})
    st = await s.wait_ready()
    assert listener.seen == [], "the workspace file made ragls talk to its listener"
    assert (st["embedder"]["provider"], st["store"]["kind"]) == ("local", "edge")
    assert st["embedder"]["dimension"] == 384 and not elsewhere.exists()
    [warning] = st["warnings"]
    for key in ("embedder.provider", "embedder.baseUrl", "embedder.apiKeyEnv", "qdrant.url", "cacheDir"):
        assert key in warning
    assert "trustedFolders" in warning  # says how to allow them
    res = await s.retrieve("parse a configuration file")
    assert res["chunks"] and listener.seen == []


async def test_the_same_settings_from_the_client_are_honoured(
    start: Starter, workspace: Path, listener: FakeProviders, fresh_cache: Path
) -> None:
    token = uuid.uuid4().hex
    init = {**_redirect(listener), "indexing": {"debounceMs": 50}}
    s = await start(init=init, env={TOKEN_VAR: token, "RAGLS_CACHE_DIR": str(fresh_cache)})
    await s.eventually(lambda: _seen(listener), timeout=60)
    req = listener.requests("/v1/embeddings")[0]
    assert req.headers["Authorization"] == f"Bearer {token}"
    assert (await s.status())["warnings"] == []


async def test_a_folder_the_user_trusts_may_set_them(
    start: Starter, workspace: Path, listener: FakeProviders, tmp_path: Path, fresh_cache: Path
) -> None:
    token = uuid.uuid4().hex
    settings = _redirect(listener)
    (workspace / ".ragls.toml").write_text(_toml(settings).split("[qdrant]")[0])
    user = tmp_path / "user-config.toml"
    user.write_text(f'trustedFolders = ["{workspace}"]\n')
    s = await start(env={TOKEN_VAR: token, "RAGLS_CACHE_DIR": str(fresh_cache), "RAGLS_CONFIG": str(user)})
    await s.eventually(lambda: _seen(listener), timeout=60)
    assert listener.requests("/v1/embeddings")[0].headers["Authorization"] == f"Bearer {token}"


async def _seen(listener: FakeProviders) -> bool:
    return bool(listener.requests("/v1/embeddings"))


async def test_links_made_after_start_cannot_reach_outside(start: Starter, workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = "outside_" + uuid.uuid4().hex[:12]
    (outside / "loot.py").write_text(f"def {secret}():\n    return 'not yours'\n")
    s = await start()
    await s.wait_ready()
    # A file link goes through the watcher's per-file path; a directory link triggers a rescan.
    for n, make_link in enumerate(
        (
            lambda: os.symlink(outside / "loot.py", workspace / "late_link.py"),
            lambda: os.symlink(outside, workspace / "late_dir"),
        )
    ):
        control = f"inside{n}_" + uuid.uuid4().hex[:12]
        make_link()
        (workspace / f"late_real_{n}.py").write_text(f"def {control}():\n    return 1\n")

        async def control_found(control: str = control) -> bool:
            res = await s.retrieve(control, topK=3)
            return any(control in c["content"] for c in res["chunks"])

        await s.eventually(control_found, timeout=30)
        await asyncio.sleep(0.5)  # the link arrived in the same or an earlier watcher batch
        res = await s.retrieve(secret, topK=20, maxChars=50_000)
        seen = res["context"] + "".join(c["content"] + c["path"] for c in res["chunks"])
        assert secret not in seen and "late_link" not in seen and "late_dir" not in seen
    assert (await s.status())["skippedByReason"].get("outside_workspace", 0) >= 1


async def test_open_buffer_obeys_max_file_bytes(start: Starter, workspace: Path) -> None:
    s = await start(init={"maxFileBytes": 1_000_000, "indexing": {"debounceMs": 50, "openBufferDebounceMs": 50}})
    await s.wait_ready()
    big_marker = "huge_" + uuid.uuid4().hex[:12]
    filler = "".join(f"def filler_{i}():\n    return {i}\n\n" for i in range(200_000))[:5_000_000]
    big = f"def {big_marker}():\n    return 0\n\n" + filler
    small_marker = "small_" + uuid.uuid4().hex[:12]
    for name, text in (("big_buffer.py", big), ("small_buffer.py", f"def {small_marker}():\n    return 0\n")):
        s.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=(workspace / name).as_uri(), language_id="python", version=1, text=text
                )
            )
        )

    async def small_found() -> bool:
        res = await s.retrieve(small_marker, topK=3)
        return any(small_marker in c["content"] for c in res["chunks"])

    await s.eventually(small_found, timeout=30)
    await asyncio.sleep(0.5)
    res = await s.retrieve(big_marker, topK=20)
    assert not any(big_marker in c["content"] for c in res["chunks"])
    assert (await s.status())["skippedByReason"].get("too_large", 0) >= 1


def _hostile_modules(ws: Path, marks: Path, names: tuple[str, ...]) -> None:
    """Modules in the workspace's root that shadow what ragls imports; importing one leaves a mark."""
    marks.mkdir()
    for name in names:
        (ws / f"{name}.py").write_text(f"open({str(marks / name)!r}, 'w').close()\n")


def test_no_workspace_file_is_imported_by_the_watch_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The watch runs in a child process started with `-m`, which puts the current directory
    (often the workspace: editors start language servers there) first on its import path."""
    from ragls.config import Settings
    from ragls.ingest.discovery import IgnoreRules
    from ragls.ingest.watcher import Watcher

    ws, marks = tmp_path / "ws", tmp_path / "marks"
    ws.mkdir()
    _hostile_modules(ws, marks, ("json", "threading", "watchfiles"))
    monkeypatch.chdir(ws)
    w = Watcher(ws, IgnoreRules(ws, Settings()), lambda _changes: None, 50)
    w.start()
    try:
        assert w.ready.wait(20), w.problem
    finally:
        w.stop()
    assert sorted(p.name for p in marks.iterdir()) == []


def test_python_m_ragls_in_the_workspace_imports_none_of_its_files(tmp_path: Path, cache_dir: Path) -> None:
    """`python -m ragls ...` run in the workspace (as agents start `ragls mcp`): neither the server
    nor its worker processes import a module that the workspace's root shadows."""
    import subprocess
    import sys

    ws, marks = tmp_path / "ws", tmp_path / "marks"
    ws.mkdir()
    (ws / "app.py").write_text("def handler(event):\n    return event\n")
    _hostile_modules(ws, marks, ("json", "pydantic", "numpy", "pathspec", "watchfiles", "sqlite3"))
    p = subprocess.run(
        [sys.executable, "-m", "ragls", "index", str(ws), "-q"],
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "RAGLS_CACHE_DIR": str(cache_dir)},
    )
    assert p.returncode == 0, p.stderr
    assert sorted(m.name for m in marks.iterdir()) == []


def test_no_workspace_file_is_imported_by_the_history_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The git history is read by `python -m ragls.git.read`, a child started in the server's
    current directory (often the workspace)."""
    from ragls.git.history import read_in_child
    from tests.gitrepo import commit, git

    ws, marks = tmp_path / "ws", tmp_path / "marks"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    commit(ws, {"app.py": "x = 1\n"}, "Initial")
    commit(ws, {"app.py": "x = 2\n"}, "Change x")
    _hostile_modules(ws, marks, ("json", "dataclasses", "dulwich"))
    monkeypatch.chdir(ws)
    read = read_in_child(ws, None, 10)
    assert len(read.commits) >= 1 and sorted(m.name for m in marks.iterdir()) == []
