"""The lexical pass's worker processes end with the server that started them, however it ends
(ragls.ingest.prepare.PreparePool): a server its editor stops with SIGTERM mid-pass, or one that
crashes, leaves no idle worker behind."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

SERVER = textwrap.dedent(
    """
    import os, signal, sys
    from ragls.ingest.prepare import PreparePool

    if __name__ == "__main__":
        pool = PreparePool(1, 0)  # one worker shows it: each holds both ends of the queue
        executor = pool._executor()
        pids = {executor.submit(os.getpid).result() for _ in range(2)}
        print(" ".join(map(str, sorted(pids))), flush=True)
        os.kill(os.getpid(), getattr(signal, sys.argv[1]))  # no pool.close(): ended from outside
    """
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in f)
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads process states from /proc (Linux)")
@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGKILL"])
def test_workers_end_when_the_server_is_killed(tmp_path: Path, signal_name: str) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER, encoding="utf-8")
    out, err = tmp_path / "out", tmp_path / "err"
    # Files, not pipes: workers that outlive the server would hold a pipe open.
    with out.open("w") as o, err.open("w") as e:
        code = subprocess.run([sys.executable, str(script), signal_name], stdout=o, stderr=e, timeout=120).returncode
    assert code != 0, err.read_text()  # killed, not a clean exit
    pids = [int(p) for p in out.read_text().split()]
    assert pids and os.getpid() not in pids
    deadline = time.monotonic() + 15
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in pids if _alive(p)]
    for p in left:  # do not leak them into the rest of the suite if the check fails
        os.kill(p, 9)
    assert not left, f"workers {left} outlived the server ({signal_name})"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads process states from /proc (Linux)")
def test_the_end_of_a_pass_waits_for_its_workers_to_exit() -> None:
    """close(wait=True), as a pooled pass ends: the workers' memory is gone before the dense
    pass grows the server's (at 150,000 chunks the two together were the peak)."""
    from ragls.ingest.prepare import PreparePool

    pool = PreparePool(2, 0)
    executor = pool._executor()
    pids = {executor.submit(os.getpid).result() for _ in range(4)}
    pool.close(wait=True)
    left = [p for p in pids if _alive(p)]
    for p in left:
        os.kill(p, 9)
    assert pids and os.getpid() not in pids
    assert not left, f"workers {left} still running after close(wait=True)"
