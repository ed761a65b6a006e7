"""Security guarantees: nothing outside the workspace, no secrets in the index, the context
or the logs, and no way for file content to break out of the context block."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp_harness import Starter

SECRET_LINES = {
    "gh": "GITHUB_TOKEN = 'ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'",
    "ghu": "copilot = 'ghu_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8'",
    "aws": "aws_key = 'AKIA" + "IOSFODNN7EXAMPLE'",
    "openai": "OPENAI_API_KEY = 'sk-" + "proj-abcdefghijklmnopqrstuvwxyz012345'",
    "pem": "-----BEGIN RSA PRIVATE KEY-----",
}


def _plant(ws: Path, outside: Path) -> None:
    body = "\n".join(f"    {line}" for line in SECRET_LINES.values())
    (ws / "settings_loader.py").write_text(
        'def load_cloud_settings():\n    """Load the cloud credentials for deployment."""\n'
        + body
        + "\n    return True\n"
    )
    (ws / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n")
    (ws / ".env.local").write_text("DATABASE_PASSWORD=hunter2hunter2\n")
    (outside / "outside_only.py").write_text("def exfiltrated_outside_function():\n    return 'outside'\n")
    os.symlink(outside, ws / "linked_outside")
    os.symlink(outside / "outside_only.py", ws / "linked_file.py")


@pytest.mark.slow
async def test_no_secret_or_outside_content_is_ever_returned(
    start: Starter, workspace: Path, tmp_path: Path, cache_dir: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    _plant(workspace, outside)
    s = await start()
    st = await s.wait_ready()
    assert st["skippedByReason"]["secret"] >= 3  # .env, .env.local, id_rsa
    assert st["skippedByReason"]["outside_workspace"] == 2
    seen = ""
    for q in (
        "cloud credentials deployment",
        "ghp token github",
        "AKIA aws key",
        "private key",
        "hunter2 password",
        "exfiltrated_outside_function",
        "load_cloud_settings",
    ):
        res = await s.retrieve(q, topK=20, maxChars=50_000)
        seen += res["context"] + "".join(c["content"] + c["path"] for c in res["chunks"])
    assert "load_cloud_settings" in seen  # the file itself is indexed, its secret lines are not
    assert "[REDACTED" in seen
    for line in SECRET_LINES.values():
        assert line.split("'")[-2 if "'" in line else 0] not in seen
    assert "hunter2" not in seen and "b3BlbnNzaC1rZXk" not in seen and "exfiltrated_outside_function" not in seen
    # Nothing secret reached the store on disk either (payloads are stored in the shard).
    blob = b"".join(p.read_bytes() for p in cache_dir.rglob("*") if p.is_file() and p.stat().st_size < 50_000_000)
    assert b"ghp_A1b2C3d4" not in blob and b"AKIAIOSFODNN7EXAMPLE" not in blob and b"hunter2hunter2" not in blob


async def test_path_globs_cannot_escape(start: Starter) -> None:
    s = await start()
    for glob in ["../**", "../../etc/passwd", "/etc/**", "C:\\\\Windows\\\\**", "src/../../x"]:
        with pytest.raises(JsonRpcException) as info:
            await s.retrieve("anything", paths=[glob])
        assert info.value.code == -32602, glob


def test_logs_carry_no_file_contents_or_keys(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    import logging

    from ragls.config import Settings
    from ragls.index.worker import Indexer

    ws = tmp_path / "ws"
    ws.mkdir()
    marker = "UNIQUE_CONTENT_MARKER_4242"
    (ws / "a.py").write_text(
        f"def f():\n    return '{marker}'\n    token = 'ghp_" + "Q7kT2xW9pL4zR8mN3vB6cY1hJ5dF0gS2aE4u" + "'\n"
    )
    (ws / "bad.py").write_bytes(b"\x00binary " + marker.encode())
    logging.basicConfig(level=logging.INFO, force=True)
    idx = Indexer(ws, Settings.model_validate({"cacheDir": str(tmp_path / "c")}))
    idx.start()
    idx.handle.ready.wait(60)
    import time

    deadline = time.monotonic() + 120
    while idx.busy() and time.monotonic() < deadline:
        time.sleep(0.1)
    idx.stop()
    out, err = capfd.readouterr()
    assert marker not in out + err and "ghp_" not in out + err
