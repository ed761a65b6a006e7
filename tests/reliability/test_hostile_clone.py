"""A cloned repository's links, FIFOs and `.git` control files (issue 51, attacks 1, 2 and 4):
the real server over stdio and the real CLI, on a real `git clone` whose committed links point
into `/proc`, with FIFOs where ignore files belong and `.git` files aimed at the server's own
input. Whatever they point at, every request is answered and the index gets ready. And a file
the user's own git excludes hide (`git status` does not show it) is not indexed either."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.gitrepo import commit, git
from tests.lsp_harness import Session, Starter

# Each status request must be answered within this (the suites run at once on 2 cores); a
# server reading its own input loses requests instead, and they are never answered.
ANSWER_S = 10.0
CODE = {
    "billing/invoice.py": "def invoice_total(lines):\n    return sum(line.amount for line in lines)\n",
    "billing/tax.py": "def vat_for(amount, rate):\n    # value added tax on a net amount\n    return amount * rate\n",
    "docs/guide.md": "# Guide\n\nInvoices add up their lines; VAT is charged on the net amount.\n",
}


def _clone_with_links(tmp_path: Path, links: dict[str, str]) -> Path:
    """A repository committing `links` (path -> target) beside ordinary code, cloned as a user
    clones it: git makes the links."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    for rel, target in links.items():
        (origin / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, origin / rel)
    commit(origin, CODE, "Billing")
    ws = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(ws)], check=True, capture_output=True, env=_git_env())
    for rel, target in links.items():
        assert os.readlink(ws / rel) == target  # the clone holds the link itself
    return ws


def _git_env() -> dict[str, str]:
    return {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}


async def _answered(s: Session, rounds: int) -> dict:
    """`rounds` status requests, one after another: each answered in time."""
    st: dict = {}
    for _ in range(rounds):
        t0 = time.monotonic()
        st = await asyncio.wait_for(s.status(), ANSWER_S)
        assert time.monotonic() - t0 < ANSWER_S
    return st


async def _ready_and_answering(s: Session, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        st = await _answered(s, 1)
        if st["state"] == "ready":
            return st
        assert st["state"] != "error", st
        assert time.monotonic() < deadline, f"not ready after {timeout} s: {st}"
        await asyncio.sleep(0.2)


async def test_ignore_files_linked_to_the_servers_own_streams_or_fifos_are_not_read(
    start: Starter, tmp_path: Path
) -> None:
    ws = _clone_with_links(tmp_path, {".gitignore": "/proc/self/fd/0", "docs/.gitignore": "/proc/self/fd/1"})
    os.mkfifo(ws / "billing" / ".gitignore")  # a FIFO blocks its reader for good
    os.mkfifo(ws / ".ragignore")
    s = await start(ws)
    st = await _ready_and_answering(s)
    assert st["filesIndexed"] == 3, st
    await _answered(s, 20)
    res = await asyncio.wait_for(s.retrieve("value added tax on a net amount"), ANSWER_S)
    assert res["chunks"][0]["path"] == "billing/tax.py"
    await asyncio.wait_for(s.client.shutdown_session(), ANSWER_S)


@pytest.mark.parametrize(
    "control",
    ["config include of fd 0", "config include of fd 1", "commondir link", "info/exclude link", "HEAD fifo"],
)
async def test_git_control_files_cannot_reach_the_servers_input(start: Starter, tmp_path: Path, control: str) -> None:
    ws = _clone_with_links(tmp_path, {})
    commit(ws, {"billing/tax.py": CODE["billing/tax.py"] + "\n\nRATE = 0.2\n"}, "Tax: charge VAT on the net amount")
    dot_git = ws / ".git"
    if control.startswith("config include"):
        fd = control[-1]
        with (dot_git / "config").open("a") as fh:
            fh.write(f"[include]\n\tpath = /proc/self/fd/{fd}\n")
    elif control == "commondir link":
        os.symlink("/proc/self/fd/0", dot_git / "commondir")
    elif control == "info/exclude link":
        (dot_git / "info").mkdir(exist_ok=True)
        (dot_git / "info" / "exclude").unlink(missing_ok=True)
        os.symlink("/proc/self/fd/0", dot_git / "info" / "exclude")
    else:
        (dot_git / "HEAD").unlink()
        os.mkfifo(dot_git / "HEAD")
    s = await start(ws)
    await _ready_and_answering(s)
    # A described change reads the git history (intent "change", as MCP find_files asks).
    res = await asyncio.wait_for(s.retrieve("charge VAT on the net amount", intent="change"), 30)
    assert res["chunks"] and res["chunks"][0]["path"] == "billing/tax.py"
    st = await _answered(s, 15)
    assert st["state"] == "ready"
    await asyncio.wait_for(s.client.shutdown_session(), ANSWER_S)


def test_the_cli_does_not_read_its_own_stdin_through_a_link(tmp_path: Path) -> None:
    """`ragls search` with an open pipe as stdin (as an agent's tool runner starts it): a
    `.gitignore -> /proc/self/fd/0` would wait for that pipe forever."""
    ws = _clone_with_links(tmp_path, {".gitignore": "/proc/self/fd/0"})
    env = {**os.environ, "RAGLS_CACHE_DIR": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "ragls", "search", str(ws), "value added tax", "--json"]
    out, err = tmp_path / "out.json", tmp_path / "err.txt"
    with out.open("wb") as fo, err.open("wb") as fe:
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=fo, stderr=fe, env=env)
        try:
            p.wait(timeout=180)  # its stdin stays open all along: nothing is written, nothing closed
        except subprocess.TimeoutExpired:
            p.kill()
            pytest.fail("ragls search blocked on its own stdin")
        finally:
            assert p.stdin is not None
            p.stdin.close()
    assert p.returncode == 0, err.read_text()
    assert "billing/tax.py" in out.read_text()


@pytest.mark.parametrize("how", ["XDG_CONFIG_HOME/git/ignore", "core.excludesFile"])
async def test_files_the_users_own_git_excludes_hide_are_not_indexed(start: Starter, tmp_path: Path, how: str) -> None:
    ws = _clone_with_links(tmp_path, {})
    (ws / "notes.local.md").write_text("# Staging notes\n\nThe staging database password is plum-harbour-sparrow.\n")
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    (xdg / "git").mkdir(parents=True)
    home.mkdir()
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg), "GIT_CONFIG_NOSYSTEM": "1"}
    if how == "core.excludesFile":
        (home / "my-ignores").write_text("*.local.md\n")
        (home / ".gitconfig").write_text("[core]\n\texcludesFile = ~/my-ignores\n")
    else:
        (xdg / "git" / "ignore").write_text("*.local.md\n")
    # Real git, as the user runs it, hides the file: ragls must agree.
    status = subprocess.run(
        ["git", "-C", str(ws), "status", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
        env={**env, "PATH": "/usr/bin:/bin"},
    ).stdout
    assert "notes.local.md" not in status
    s = await start(ws, env=env)
    st = await _ready_and_answering(s)
    assert st["filesIndexed"] == 3, st
    res = await s.retrieve("staging database password")
    assert all(c["path"] != "notes.local.md" for c in res["chunks"])
    assert "plum-harbour-sparrow" not in res["context"]
