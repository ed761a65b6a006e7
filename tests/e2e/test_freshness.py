"""Freshness: branch switches reuse the embedding cache, bursts are coalesced, open buffers
are searchable before save."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from ragls.config import Settings
from ragls.index.worker import Indexer
from ragls.ingest.watcher import Watcher
from tests.conftest import require_tool
from tests.lsp_harness import Starter


def _git(ws: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(ws), *args],
        check=True,
        capture_output=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
            "PATH": "/usr/bin:/bin",
        },
    )


async def test_branch_switch_reuses_the_embedding_cache(start: Starter, workspace: Path, fresh_cache: Path) -> None:
    require_tool(shutil.which("git"), "git")
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "main")
    _git(workspace, "checkout", "-q", "-b", "feature")
    (workspace / "billing" / "invoice.py").write_text(
        (workspace / "billing" / "invoice.py").read_text().replace("sales tax", "value added tax")
    )
    (workspace / "billing" / "credit.py").write_text("def issue_credit_note(invoice):\n    return -invoice.total\n")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "feature")
    _git(workspace, "checkout", "-q", "main")

    s = await start(env={"RAGLS_CACHE_DIR": str(fresh_cache)})
    st = await s.wait_ready()
    on_main = st["embedded"]

    async def settled(check_path: str, present: bool) -> dict:
        async def ok() -> bool:
            res = await s.retrieve("issue_credit_note", topK=10)
            has = any(c["path"] == check_path for c in res["chunks"])
            return has == present and (await s.status())["state"] == "ready"

        await s.eventually(ok, timeout=60)
        return await s.status()

    _git(workspace, "checkout", "-q", "feature")
    st = await settled("billing/credit.py", True)
    first_visit = st["embedded"]
    assert first_visit > on_main  # new code is embedded once
    _git(workspace, "checkout", "-q", "main")
    st = await settled("billing/credit.py", False)
    assert st["embedded"] == first_visit  # back to known code: no embed calls
    _git(workspace, "checkout", "-q", "feature")
    st = await settled("billing/credit.py", True)
    assert st["embedded"] == first_visit
    assert st["cache"]["hits"] > 0


def test_burst_of_1000_changes_is_coalesced(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "seed.py").write_text("def seed():\n    return 0\n")
    settings = Settings.model_validate({"cacheDir": str(tmp_path / "cache"), "indexing": {"debounceMs": 300}})
    idx = Indexer(ws, settings)
    idx.start()
    assert idx.handle.ready.wait(60)
    deadline = time.monotonic() + 60
    while idx.busy() and time.monotonic() < deadline:
        time.sleep(0.05)
    watcher = Watcher(ws, idx.rules, idx.notify_changes, settings.indexing.debounce_ms)
    watcher.start()
    time.sleep(0.5)
    try:
        jobs_before = idx.state.change_jobs
        for i in range(1000):  # what a `git checkout` touching 1,000 files looks like
            (ws / "src" / f"gen_{i}.py").write_text(f"def generated_{i}(x):\n    return x + {i}\n")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            time.sleep(0.2)
            if len(idx.indexed_paths()) == 1001 and not idx.busy():
                break
        assert len(idx.indexed_paths()) == 1001
        jobs = idx.state.change_jobs - jobs_before
        assert jobs <= 5, jobs  # a handful of coalesced batches, not 1,000 re-indexes
    finally:
        watcher.stop()
        idx.stop()


def test_ignored_paths_never_reach_the_indexer(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitignore").write_text("out/\n")
    seen: list[set[str]] = []
    settings = Settings()
    from ragls.ingest.discovery import IgnoreRules

    w = Watcher(ws, IgnoreRules(ws, settings), seen.append, 50)
    w.start()
    assert w.ready.wait(10)
    try:
        (ws / "out").mkdir()
        (ws / "out" / "x.py").write_text("x = 1\n")
        (ws / "node_modules").mkdir()
        (ws / "node_modules" / "y.js").write_text("y\n")
        (ws / "kept.py").write_text("k = 1\n")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any("kept.py" in b for b in seen):
            time.sleep(0.05)
    finally:
        w.stop()
    changed = set().union(*seen) if seen else set()
    assert "kept.py" in changed
    assert not any(p.startswith(("out", "node_modules")) for p in changed), changed


def _watch_processes() -> set[int]:
    """This process's children that run the file watch (ingest/watch_process.py)."""
    import os

    out = set()
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        for pid in open(f"/proc/{os.getpid()}/task/{task}/children").read().split():
            try:
                if b"ragls.ingest.watch_process" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    out.add(int(pid))
            except OSError:
                pass
    return out


def _until(cond: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def test_the_watch_runs_in_its_own_process_and_comes_back_when_it_dies(tmp_path: Path) -> None:
    """The watch's native setup holds the GIL, so it runs in a process of its own: the
    server's requests never wait for it. Killed, it is started again, and the changes made
    meanwhile are picked up by a scan (`on_restart`); stopped, the process is gone."""
    import os
    import signal

    from ragls.ingest.discovery import IgnoreRules

    ws = tmp_path / "ws"
    ws.mkdir()
    seen: list[set[str]] = []
    rescans: list[float] = []
    w = Watcher(ws, IgnoreRules(ws, Settings()), seen.append, 50, on_restart=lambda: rescans.append(time.monotonic()))
    before = _watch_processes()
    w.start()
    try:
        assert w.ready.wait(10) and w.watching
        (first,) = _watch_processes() - before
        (ws / "a.py").write_text("a = 1\n")
        assert _until(lambda: any("a.py" in b for b in seen)), seen
        os.kill(first, signal.SIGKILL)
        assert _until(lambda: bool(rescans) and w.watching), (rescans, w.problem)
        (second,) = _watch_processes() - before
        assert second != first
        (ws / "b.py").write_text("b = 1\n")
        assert _until(lambda: any("b.py" in b for b in seen)), seen
    finally:
        w.stop()
    assert _until(lambda: not (_watch_processes() - before)), "the watch process outlived its watcher"
