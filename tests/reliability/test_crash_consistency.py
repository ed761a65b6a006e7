"""kill -9 at random points of cold indexing, incremental updates and deletes; after every
restart the checker must find the index consistent, and in the end current, without a full
re-embed. RAGLS_KILL_LOOPS raises the number of kills (make soak)."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.reliability.conftest import generated_workspace, ragls_cmd, run_cli, write_module

KILLS = int(os.environ.get("RAGLS_KILL_LOOPS", "6"))  # make soak: 200
BATCH = 16  # the embedder's default batch: at most one batch in flight is lost per kill


def _mutate(ws: Path, rng: random.Random, step: int) -> None:
    mods = sorted(ws.rglob("mod_*.py"))
    for p in rng.sample(mods, min(3, len(mods))):  # edits
        write_module(ws, p.relative_to(ws).as_posix(), 1000 + step * 10 + rng.randrange(10), 6)
    if len(mods) > 10:  # a delete
        rng.choice(mods).unlink()
    write_module(ws, f"pkg_new/added_{step}.py", 5000 + step, 5)  # an addition


@pytest.mark.slow
@pytest.mark.timeout(120 + 25 * KILLS)
def test_kill9_loop_keeps_index_consistent(tmp_path: Path, rcache: Path) -> None:
    ws = generated_workspace(tmp_path / "ws", files=30)
    rng = random.Random(1234)
    env = {**os.environ, "RAGLS_CACHE_DIR": str(rcache)}
    embedded = 0
    survived = 0
    for step in range(KILLS):
        if step % 2:
            _mutate(ws, rng, step)
        proc = subprocess.Popen(
            ragls_cmd("-v", "index", str(ws), "-q"),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(rng.uniform(0.3, 3.0))
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=30)
        embedded += sum(int(n) for n in re.findall(r"embedded (\d+) chunks", err))
        code, report, stderr = run_cli(["check", str(ws)], rcache)
        assert isinstance(report, dict), (step, code, report, stderr[-3000:])
        problems = {
            k: report[k] for k in ("orphan_chunks", "missing_chunks", "deleted_files_with_chunks", "duplicate_chunks")
        }
        assert code == 0 and report["consistent"], (step, problems, stderr[-2000:])
        survived += 1
    code, status, _ = run_cli(["-v", "index", str(ws), "-q"], rcache)
    assert code == 0 and status["state"] == "ready", status
    embedded += status["embedded"]
    code, report, _ = run_cli(["check", str(ws)], rcache)
    assert code == 0 and report["current"], report
    assert report["files_current"] == report["files_on_disk"]
    # Resume, not restart: every chunk text is embedded about once, whatever the kills did.
    distinct = status["chunks"] + 40 * KILLS  # generous: edits add new chunk texts every other step
    assert embedded <= distinct + BATCH * KILLS, (embedded, status["chunks"])
    assert survived == KILLS
    print(
        f"\nkill -9 loop: {survived} kills survived, {report['files_current']} files current, 0 lost; "
        f"{embedded} chunks embedded in total for {status['chunks']} final chunks"
    )
