"""Two servers on one workspace: the second shares the first's index; locks of a killed process
never block a restart."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.lsp_harness import Starter
from tests.reliability.conftest import generated_workspace, ragls_cmd


async def test_second_server_shares_the_first_servers_index(start: Starter, workspace: Path) -> None:
    first = await start()
    st1 = await first.wait_ready()
    second = await start()
    st = await second.wait_ready()
    assert st["state"] == "ready" and st["filesIndexed"] == 8
    # One index per folder: the second server answers from the first one's, embedding nothing.
    assert st["store"]["location"] == st1["store"]["location"] and "/alt-" not in st["store"]["location"]
    assert st["embedded"] == st1["embedded"] and not st["message"]
    res = await second.retrieve("calculate the invoice total including tax", topK=1)
    assert res["chunks"][0]["path"] == "billing/invoice.py"
    res1 = await first.retrieve("calculate the invoice total including tax", topK=1)
    assert res1["chunks"][0]["path"] == "billing/invoice.py"


def test_lock_of_killed_process_does_not_block_restart(tmp_path: Path, rcache: Path) -> None:
    ws = generated_workspace(tmp_path / "ws", files=10)
    env = {**os.environ, "RAGLS_CACHE_DIR": str(rcache)}
    proc = subprocess.Popen(
        ragls_cmd("index", str(ws), "-q"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(2.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    out = subprocess.run(ragls_cmd("index", str(ws), "-q"), env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "alt-" not in out.stdout  # the primary index was free again
