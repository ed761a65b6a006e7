"""The indexer's fault model (docs/reliability.md) under real faults: a filesystem that fills
up, an embedding provider that goes away and comes back, a manifest that is locked, a
settings change mid-index, a watch that goes deaf. For each: the process stays idle while it
waits, the status says what happened, it recovers by itself, and the index stays consistent."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from lsprotocol import types

from tests.conftest import IN_CI
from tests.lsp_harness import Session, Starter
from tests.reliability.conftest import generated_workspace, run_cli
from tests.unit.fake_providers import FakeProviders

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_percent(pid: int, seconds: float = 3.0) -> float:
    """CPU use of a process over a window, from /proc (user + system, all threads)."""

    def ticks() -> int:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    t0, c0 = time.monotonic(), ticks()
    time.sleep(seconds)
    return 100.0 * (ticks() - c0) / _TICKS / (time.monotonic() - t0)


async def wait_status(s: Session, check, timeout: float, what: str, every: float = 0.2) -> dict:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    st: dict = {}
    while time.monotonic() < deadline:
        st = await s.status()
        if check(st):
            return st
        await asyncio.sleep(every)
    raise AssertionError(f"{what}: not seen within {timeout}s; last status {st}")


def alt_slots(cache: Path) -> list[Path]:
    return list((cache / "index").glob("*/*/alt-*"))


def figure(fault: str, **values: float) -> None:
    """Measured figures for docs/reliability.md (shown with pytest -s)."""
    print(f"FAULT-FIGURE {fault}: " + ", ".join(f"{k}={v:.2f}" for k, v in values.items()))


def check_consistent(root: Path, cache: Path) -> None:
    code, report, err = run_cli(["check", str(root)], cache)
    assert code == 0 and isinstance(report, dict) and report["consistent"], (report, err[-2000:])


# The full-disk test's filesystem. It must hold a new shard (8 MB asked, ~7.6 MB used) and the
# first lexical batch (3x its size plus a 4 MB margin asked: ~6 MB for 64 files of 4 short
# functions); the index of 150 such files needs ~17 MB, so the dense pass runs out of room early.
SMALL_DISK = 14 << 20


@pytest.fixture
def tmpfs(tmp_path: Path):  # type: ignore[no-untyped-def]
    if os.geteuid() != 0 or not shutil.which("mount"):
        if IN_CI:
            pytest.fail("the full-disk test needs root to mount a tmpfs")
        pytest.skip("needs root to mount a tmpfs")
    mnt = tmp_path / "small-disk"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SMALL_DISK}", "tmpfs", str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.slow
async def test_full_disk_pauses_indexing_and_resumes_when_space_returns(
    start: Starter, tmp_path: Path, tmpfs: Path
) -> None:
    ws = generated_workspace(tmp_path / "big", files=150, functions=4, short=True)
    s = await start(root=ws, env={"RAGLS_CACHE_DIR": str(tmpfs)})
    st = await wait_status(s, lambda st: "no space left" in (st["message"] or ""), 240, "the disk-full error state")
    assert st["state"] == "error" and str(tmpfs) in st["message"]
    # A real full disk, mid-index: the filesystem itself has less free than the refused write
    # needs (the message rounds to 0.1 MB), and files were still waiting for their vectors.
    free = shutil.disk_usage(tmpfs).free
    needed = re.search(r"about ([\d.]+) MB needed", st["message"])
    assert free < (float(needed.group(1)) + 0.05) * 1e6 if needed else free < 1e6, (free, st["message"])
    assert st["lexical"]["done"] > 0 and st["dense"]["done"] < st["dense"]["total"] == 150, st
    # Still alive (a mapped write past the free space would have killed it with SIGBUS), idle
    # while it waits, and still answering from what is indexed.
    cpu = cpu_percent(s.pid)
    assert cpu < 5.0, f"{cpu:.1f}% CPU while waiting for disk space"
    res = await s.retrieve("parse the cache for item", topK=3)
    assert res["chunks"], res
    subprocess.run(["mount", "-o", "remount,size=96m", str(tmpfs)], check=True)
    t0 = time.monotonic()
    await wait_status(s, lambda st: st["state"] != "error", 60, "indexing resumed once space returned")
    resumed = time.monotonic() - t0
    st = await wait_status(s, lambda st: st["state"] == "ready", 300, "recovery once space returned")
    figure("disk full", cpu_pct=cpu, resume_s=resumed, ready_s=time.monotonic() - t0)
    assert st["filesFailed"] == 0 and st["filesIndexed"] == st["filesTotal"] == 150
    # The whole index would not have fitted: without the free-space check, a write would have
    # found the disk truly full (SIGBUS through a memory map), not merely short of the margin.
    used = shutil.disk_usage(tmpfs).used
    assert used > SMALL_DISK, f"the index takes {used} bytes: it fits on the small disk"
    assert not alt_slots(tmpfs)
    await s.close()
    check_consistent(ws, tmpfs)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
async def test_provider_down_pauses_dense_then_resumes(start: Starter, workspace: Path, fresh_cache: Path) -> None:
    port = _free_port()
    embedder = {
        "provider": "ollama",
        "baseUrl": f"http://127.0.0.1:{port}",
        "model": "tiny",
        "dimensions": 8,
        "maxRetries": 1,
        "retryBaseMs": 1,
        "timeoutS": 2,
    }
    t_down = time.monotonic()
    # The provider is down from the start (nothing listens on its port) for 30 s.
    s = await start(env={"RAGLS_CACHE_DIR": str(fresh_cache)}, init={"embedder": embedder})
    st = await wait_status(s, lambda st: st["phase"] == "paused", 90, "dense paused")
    assert st["state"] == "error" and "dense paused" in st["message"] and "next try at" in st["message"]
    assert st["lexical"]["done"] == 8  # lexical work was not held up
    cpu = cpu_percent(s.pid)
    assert cpu < 5.0, f"{cpu:.1f}% CPU while the provider is down"
    t0 = time.monotonic()
    res = await s.retrieve("invoice compute_total", topK=3)
    assert time.monotonic() - t0 < 5, "retrieve waited for a provider known to be down"
    assert res["chunks"] and res["error"] is None and any("lexical only" in w for w in res["warnings"])
    await asyncio.sleep(max(0.0, 30 - (time.monotonic() - t_down)))
    with FakeProviders(dim=8, port=port) as back:
        t0 = time.monotonic()
        st = await wait_status(s, lambda st: st["state"] == "ready", 120, "dense resumed")
        assert back.requests("/api/embed")
        figure("provider down 30 s", cpu_pct=cpu, recovery_s=time.monotonic() - t0)
    assert st["filesFailed"] == 0 and st["filesIndexed"] == st["filesTotal"] == 8
    states = [n["state"] for n in s.status_notes]
    assert "error" in states and states[-1] == "ready"


async def test_locked_manifest_is_retried_not_lost(start: Starter, workspace: Path, fresh_cache: Path) -> None:
    s = await start(env={"RAGLS_CACHE_DIR": str(fresh_cache)})
    await s.wait_ready()
    [manifest] = list((fresh_cache / "index").glob("*/*/manifest.sqlite"))
    db = sqlite3.connect(manifest, timeout=1, isolation_level=None)
    db.execute("BEGIN EXCLUSIVE")
    marker = "locked_" + uuid.uuid4().hex[:10]
    (workspace / "late.py").write_text(f"def {marker}():\n    return 1\n")
    st = await wait_status(s, lambda st: "manifest error" in (st["message"] or ""), 30, "the manifest fault")
    assert st["state"] == "error"
    cpu = cpu_percent(s.pid, 2.0)
    db.execute("ROLLBACK")
    db.close()
    t0 = time.monotonic()
    assert cpu < 5.0, f"{cpu:.1f}% CPU while the manifest is locked"

    async def found() -> bool:
        return any(marker in c["content"] for c in (await s.retrieve(marker, topK=3))["chunks"])

    await s.eventually(found, timeout=30)
    figure("manifest locked", cpu_pct=cpu, recovery_s=time.monotonic() - t0)
    st = await wait_status(s, lambda st: st["state"] == "ready", 60, "ready again")
    assert any("manifest error" in e["message"] for e in st["errors"])
    await s.close()
    check_consistent(workspace, fresh_cache)


@pytest.mark.slow
async def test_settings_change_mid_index_reopens_the_same_slot(
    start: Starter, tmp_path: Path, fresh_cache: Path
) -> None:
    # Enough files that the change lands while the lexical pass is still going (it waits for 50,
    # and checks that the pass had not ended then): on an idle machine 300 one-line files were
    # all lexical between two polls 0.2 s apart.
    ws = generated_workspace(tmp_path / "many", files=1000, functions=1, short=True)
    s = await start(root=ws, env={"RAGLS_CACHE_DIR": str(fresh_cache)})
    st = await wait_status(s, lambda st: st["lexical"]["done"] >= 50, 120, "the lexical pass under way", every=0.02)
    assert st["lexical"]["done"] < st["lexical"]["total"] == 1000, st
    s.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"ragls": {"indexing": {"maxChunkChars": 2000}}})
    )
    t0 = time.monotonic()
    st = await s.wait_ready(300)
    figure("settings change mid-index", ready_after_change_s=time.monotonic() - t0)
    assert st["filesTotal"] == 1000 and st["filesFailed"] == 0
    assert "in use by another" not in (st["message"] or "")
    assert not alt_slots(fresh_cache), alt_slots(fresh_cache)
    await s.close()
    check_consistent(ws, fresh_cache)


async def test_a_replaced_workspace_folder_is_watched_again(start: Starter, workspace: Path) -> None:
    s = await start()
    st = await s.wait_ready()
    assert st["watching"] is True
    # The folder is replaced under the watch (a re-clone, an archive extracted over it): the
    # old watch is deaf; the supervisor must notice, restart it and rescan.
    old = workspace.with_name("ws-old")
    workspace.rename(old)
    shutil.copytree(old, workspace, symlinks=True)
    marker = "rewatched_" + uuid.uuid4().hex[:10]
    t0 = time.monotonic()
    await asyncio.sleep(2.5)
    (workspace / "after_replace.py").write_text(f"def {marker}():\n    return 2\n")

    async def found() -> bool:
        return any(marker in c["content"] for c in (await s.retrieve(marker, topK=3))["chunks"])

    await s.eventually(found, timeout=30)
    figure("workspace folder replaced", new_file_found_after_replace_s=time.monotonic() - t0)
    assert (await s.status())["watching"] is True


async def test_index_folder_replaced_mid_index_is_rebuilt(start: Starter, tmp_path: Path, fresh_cache: Path) -> None:
    ws = generated_workspace(tmp_path / "replaced", files=120, functions=2)
    s = await start(root=ws, env={"RAGLS_CACHE_DIR": str(fresh_cache)})
    await wait_status(s, lambda st: st["lexical"]["done"] >= 20, 120, "indexing under way")
    [index] = [p.parent for p in (fresh_cache / "index").glob("*/*/manifest.sqlite")]
    index.rename(index.with_name(index.name + ".moved-away"))
    index.mkdir()
    t0 = time.monotonic()
    await wait_status(
        s, lambda st: any("replaced" in e["message"] for e in st["errors"]), 60, "the replacement noticed"
    )
    st = await s.wait_ready(300)
    figure("index folder replaced mid-index", ready_after_replace_s=time.monotonic() - t0)
    assert st["filesTotal"] == 120 and st["filesIndexed"] == 120 and st["filesFailed"] == 0
    last: dict = {}

    async def answers() -> bool:
        nonlocal last
        last = await s.retrieve("parse the window for item", topK=3)
        return bool(last["chunks"])

    try:
        await s.eventually(answers, timeout=30)
    except AssertionError as exc:
        raise AssertionError(f"no results from the rebuilt index: {last}") from exc
    await s.close()
    check_consistent(ws, fresh_cache)
    assert (index / "shard").is_dir()


async def test_an_index_that_cannot_be_loaded_is_moved_aside_and_rebuilt(
    start: Starter, workspace: Path, fresh_cache: Path
) -> None:
    s = await start(env={"RAGLS_CACHE_DIR": str(fresh_cache)})
    await s.wait_ready()
    await s.close()
    [index] = [p.parent for p in (fresh_cache / "index").glob("*/*/manifest.sqlite")]
    for f in (index / "shard").rglob("*"):
        if f.is_file():
            f.write_bytes(b"\0garbage" * 16)
    s = await start(env={"RAGLS_CACHE_DIR": str(fresh_cache)})
    st = await s.wait_ready()
    assert st["filesIndexed"] == st["filesTotal"] == 8
    assert any("moved aside" in e["message"] for e in st["errors"])
    assert list(index.parent.glob(index.name + ".broken-*"))
