"""A hostile repository, tried as an attacker would (issue 37): the real server over stdio, real
files and real symlinks. Findings 1, 2 and 6 live here: a backtracking ignore pattern or glob
cannot freeze the server, a link is judged by what it points to, and no workspace setting makes
indexing super-linear. The other findings have their own files: secrets
(test_hostile_secrets.py), forged context tags (test_hostile_escaping.py), a private cache and
stdio framing (test_hostile_private.py)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.e2e.test_mcp import call, mcp_session
from tests.lsp_harness import Session, Starter

# 13 stars: each one doubled the time of a backtracking match (4 s for 8 stars on 40 characters).
HOSTILE_GLOB = "*a*a*a*a*a*a*a*a*a*a*a*a*c"
LONG_NAME = "a" * 60 + ".md"
# A backtracking match of HOSTILE_GLOB on LONG_NAME takes hours: an answer within 5 s tells a
# responsive server from a frozen one, even on a loaded machine (the suites run at once on 2 cores).
RESPONSIVE_S = 5.0


async def _timed(coro: Any) -> tuple[float, Any]:
    t0 = time.monotonic()
    out = await coro
    return time.monotonic() - t0, out


async def _responsive_until_ready(s: Session, timeout: float = 90) -> dict[str, Any]:
    """Poll the status until ready; every answer must come within RESPONSIVE_S."""
    deadline = time.monotonic() + timeout
    while True:
        took, st = await _timed(asyncio.wait_for(s.status(), 5))
        assert took < RESPONSIVE_S, f"rag/indexStatus took {took:.2f}s"
        if st["state"] == "ready":
            return st
        assert st["state"] != "error", st
        assert time.monotonic() < deadline, f"not ready after {timeout}s: {st}"
        await asyncio.sleep(0.2)


def _hostile_ignore_workspace(root: Path) -> Path:
    root.mkdir()
    (root / ".gitignore").write_text(f"{HOSTILE_GLOB}\n")
    (root / LONG_NAME).write_text("# Notes\n\nA file named with sixty a letters.\n")
    (root / "billing.py").write_text("def invoice_total(lines):\n    return sum(l.amount for l in lines)\n")
    return root


async def test_a_backtracking_gitignore_line_cannot_freeze_the_server(start: Starter, tmp_path: Path) -> None:
    ws = _hostile_ignore_workspace(tmp_path / "repo")
    s = await start(ws)
    st = await _responsive_until_ready(s)
    assert st["filesIndexed"] == 2  # billing.py and the long-named file (no `c` in its name)
    took, res = await _timed(s.retrieve("invoice total", paths=[HOSTILE_GLOB, "*.py"]))
    assert took < RESPONSIVE_S, f"rag/retrieve with a hostile glob took {took:.2f}s"
    assert [c["path"] for c in res["chunks"]] and all(c["path"] == "billing.py" for c in res["chunks"])
    took, _ = await _timed(asyncio.wait_for(s.client.shutdown_session(), 5))
    assert took < RESPONSIVE_S


async def test_a_backtracking_glob_from_an_agent_answers_at_once(tmp_path: Path) -> None:
    ws = _hostile_ignore_workspace(tmp_path / "repo")
    async with mcp_session(ws, tmp_path / "cache") as session:
        first = await call(session, "search_code", {"query": "invoice total"})  # waits for the first pass
        assert "billing.py" in first.content[0].text
        t0 = time.monotonic()
        res = await call(session, "search_code", {"query": "invoice total", "paths": [HOSTILE_GLOB]})
        assert time.monotonic() - t0 < RESPONSIVE_S
        assert not res.is_error and "billing.py" not in res.content[0].text  # the glob matches neither file
        t0 = time.monotonic()
        st = await call(session, "index_status", {})
        assert time.monotonic() - t0 < RESPONSIVE_S and st.content[0].text.startswith("Index of")


# -- links judged by their target -------------------------------------------------------------

SECRETS = {
    ".env": "DATABASE_URL=postgres://app:Zq7pLx9vRt2@db.internal:5432/app\n"
    "STRIPE_SECRET_KEY=stripe-live-Hq83JdkQ0pW\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIbPxRfiCYzEXAMPLEKEY\n",
    "private/keys.txt": "deploy key: private-deploy-9f8e7d6c5b4a\n",
}
MARKERS = ("Zq7pLx9vRt2", "stripe-live-Hq83JdkQ0pW", "wJalrXUtnFEMIbPxRfiCY", "private-deploy-9f8e7d6c5b4a", "tok3n")


def _linked_workspace(root: Path) -> Path:
    (root / "private").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / ".git").mkdir()
    (root / ".gitignore").write_text(".env\nprivate/\n")
    for rel, text in SECRETS.items():
        (root / rel).write_text(text)
    (root / ".git" / "config").write_text('[remote "origin"]\n\turl = https://user:tok3n@example.com/r.git\n')
    (root / "app.py").write_text(
        'def connect_database():\n    """How the app connects to the database: DATABASE_URL."""\n'
        "    return open_pool(os.environ['DATABASE_URL'])\n"
    )
    os.symlink("../.env", root / "docs" / "local-setup.md")
    os.symlink("private/keys.txt", root / "public.txt")
    os.symlink(".git/config", root / "gitcfg.txt")
    return root


async def _nothing_secret_returned(s: Session) -> None:
    seen = ""
    for q in ("how does the app connect to the database?", "stripe secret key", "deploy key", "remote url token"):
        res = await s.retrieve(q, topK=20, maxChars=50_000)
        seen += res["context"] + "".join(c["content"] + c["path"] for c in res["chunks"])
    assert "connect_database" in seen  # the question finds the code
    for marker in MARKERS:
        assert marker not in seen, marker


async def test_links_to_secret_ignored_or_git_files_are_skipped(start: Starter, tmp_path: Path) -> None:
    ws = _linked_workspace(tmp_path / "repo")
    s = await start(ws)
    st = await s.wait_ready()
    reasons = st["skippedByReason"]
    assert reasons.get("link_to_secret") == 1 and reasons.get("link_to_ignored") == 1, reasons
    assert reasons.get("link_to_git") == 1, reasons
    await _nothing_secret_returned(s)

    # Links that appear later (a checkout, a build step) follow the same rule on the watcher's
    # event, and so does an editor buffer opened on one of them.
    os.symlink("../.env", ws / "docs" / "later.md")
    os.symlink(".git/config", ws / "later-git.txt")
    (ws / "later.py").write_text("def arrived_later():\n    return 1\n")

    async def settled() -> bool:
        res = await s.retrieve("arrived_later")
        return any("arrived_later" in c["content"] for c in res["chunks"])

    await s.eventually(settled, 30)
    env_text = (ws / ".env").read_text()
    s.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem((ws / "docs" / "local-setup.md").as_uri(), "markdown", 1, env_text)
        )
    )
    await asyncio.sleep(1.5)  # past the open-buffer debounce (50 ms here) and a batch
    st = await s.wait_ready()
    assert st["skippedByReason"].get("link_to_secret") == 2 and st["skippedByReason"].get("link_to_git") == 2
    await _nothing_secret_returned(s)


# -- settings that would make indexing super-linear ------------------------------------------


async def test_workspace_chunking_settings_cannot_make_indexing_quadratic(start: Starter, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    ws.mkdir()
    (ws / ".ragls.toml").write_text("[indexing]\nwindowLines = 1000\nwindowOverlap = 500\nmaxChunkChars = 200\n")
    for n in range(4):
        body = "\n".join(f"    value_{i} = compute(alpha_{i}, beta_{i})  # step {i} of {n}" for i in range(3000))
        (ws / f"big_{n}.py").write_text(f"def big_function_{n}():\n{body}\n")
    s = await start(ws)
    t0 = time.monotonic()
    while True:  # every file keyword-searchable soon (dense vectors follow in the background)
        st = await s.status()
        if st["filesTotal"] == 5 and st["lexical"]["done"] == 5:  # .ragls.toml is indexed too
            break
        assert time.monotonic() - t0 < 30, st
        await asyncio.sleep(0.2)
    # Each window moves on by at least half its length: about 1,500 chunks a file, not 3,000.
    assert st["chunks"] <= 4 * 1600, st["chunks"]
    res = await s.retrieve("big_function_3 value_2999")
    assert any(c["path"] == "big_3.py" for c in res["chunks"])


async def test_out_of_range_workspace_settings_are_clamped_with_a_warning(start: Starter, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    ws.mkdir()
    (ws / ".ragls.toml").write_text(
        "maxFileBytes = 99999999999\n[indexing]\nwindowLines = 100000\nwindowOverlap = 800\nnice = 'high'\n"
        "[retrieval]\ntopK = 0\n"
    )
    (ws / "a.py").write_text("def only_function():\n    return 1\n")
    s = await start(ws)
    st = await s.wait_ready()
    warnings = "\n".join(st["warnings"])
    assert "maxFileBytes = 99999999999 is above the maximum 50000000" in warnings
    assert "indexing.windowLines = 100000 is above the maximum 1000" in warnings
    assert "retrieval.topK = 0 is below the minimum 1" in warnings
    assert "indexing.windowOverlap = 800 is above the maximum 500" in warnings
    assert "indexing.windowOverlap = 500 is more than half" not in warnings  # 500 of 1,000 is allowed
    assert "indexing.nice" in warnings, warnings
    assert st["filesIndexed"] == 2  # a.py and .ragls.toml


def _huge_log(path: Path, lines: int = 1_000_000) -> None:
    """A 1M-line text file (about 37 MB): 25k line windows at the default settings."""
    with path.open("w") as fh:
        for i in range(0, lines, 1000):
            fh.write("".join(f"{j} GET /api/orders/{j % 977} 200 {j % 53} ms\n" for j in range(i, i + 1000)))


async def test_a_huge_file_costs_one_bounded_share_whatever_the_workspace_asks(start: Starter, tmp_path: Path) -> None:
    """Issue 51, attack 6: a `.ragls.toml` raising maxFileBytes to 50 MB beside a 1M-line file
    made 25k chunks, 1.2 GB and a 3.3 s status answer. A workspace may raise it to 4 MB; the
    user may raise it further, and then the file still gets one budget of chunks."""
    for ws in (tmp_path / "repo", tmp_path / "mine"):
        ws.mkdir()
        (ws / ".ragls.toml").write_text("maxFileBytes = 50000000\n")
        (ws / "orders.py").write_text("def order_total(order):\n    return sum(i.price for i in order.items)\n")
        _huge_log(ws / "access.txt")
    s = await start(tmp_path / "repo")
    st = await _responsive_until_ready(s)
    assert st["skippedByReason"].get("too_large") == 1, st
    assert any("maxFileBytes = 50000000 is above what a workspace may set" in w for w in st["warnings"]), st
    assert st["chunks"] < 10, st
    # The user's own settings may raise it: the file is read, and refused for its chunk count.
    mine = await start(tmp_path / "mine", init={"maxFileBytes": 50_000_000, "indexing": {"debounceMs": 50}})
    st = await _responsive_until_ready(mine)
    assert st["skippedByReason"].get("too_many_chunks") == 1, st
    assert st["chunks"] < 10, st
    res = await mine.retrieve("order total")
    assert res["chunks"][0]["path"] == "orders.py"


# -- an index made under weaker redaction rules ---------------------------------------------

_OLD_RELEASE = """
import sys
import ragls.ingest.prepare, ragls.index.apply
from ragls.ingest.secrets import Redaction
# What an older ragls did: no redaction at all, and the rules mark it wrote in the manifest.
ragls.ingest.prepare.scan = lambda text, path="": Redaction(text, 0, False)
ragls.index.apply._PREPARE_RULES = "secrets 1"
from ragls.frontends.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_an_index_made_under_older_secret_rules_is_prepared_again(tmp_path: Path, fresh_cache: Path) -> None:
    """Files whose bytes did not change are normally never read again: after an upgrade of the
    secret rules, the text older rules let through must still leave the index."""
    import json
    import subprocess
    import sys

    ws = tmp_path / "repo"
    ws.mkdir()
    (ws / "settings.py").write_text('def load():\n    db_password = "Zq7pLx9vRt2WkQ"\n    return db_password\n')
    env = {**os.environ, "RAGLS_CACHE_DIR": str(fresh_cache)}

    def run(*args: str) -> str:
        r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300, check=False)
        assert r.returncode == 0, r.stderr
        return r.stdout

    run(sys.executable, "-c", _OLD_RELEASE, "index", str(ws), "-q")
    stale = run(sys.executable, "-c", _OLD_RELEASE, "search", str(ws), "load the db password", "--json", "-q")
    assert "Zq7pLx9vRt2WkQ" in stale  # the old index holds it (the file is unchanged since)
    run(sys.executable, "-m", "ragls", "index", str(ws), "-q")  # this release: prepares it again
    res = json.loads(run(sys.executable, "-m", "ragls", "search", str(ws), "load the db password", "--json", "-q"))
    assert res["chunks"] and "Zq7pLx9vRt2WkQ" not in json.dumps(res)
