"""`ragls schema | head`: a reader that leaves early ends the command quietly, no traceback."""

from __future__ import annotations

import subprocess
import sys


def test_a_closed_stdout_ends_the_command_without_a_traceback() -> None:
    p = subprocess.Popen(
        [sys.executable, "-m", "ragls", "schema", "--protocol"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()  # the reader is gone before the first write
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 141, err
    assert "Traceback" not in err, err
