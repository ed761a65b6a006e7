"""Issue 55: ratings of answers as the user's own evaluation set. The real server over LSP and
`ragls mcp` over the MCP SDK rate live answers; the ratings land in a private file per folder
under $XDG_STATE_HOME (0600 in 0700, never in the workspace, secrets redacted); `ragls feedback`
lists and erases them; `ragls eval --feedback` replays them with the same ranks as the live
answers, and after an edit that moves a marked location says which one moved."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from ragls.system.identity import workspace_id
from tests.e2e.test_mcp import call, mcp_session, text_of, wait_ready
from tests.lsp_harness import Starter

QUESTION = "calculate the invoice total including tax"
OTHER = "great-circle distance between two coordinates"
# A GitHub token in a question: the same scan as for code redacts the line before it is stored.
TOKEN = "ghp_" + "8fK2mQ9xLr4TzV1bN7cY3wHs6JdP0aEu5GiO"
SECRET_QUESTION = f"why is the rate limiter refusing requests with token {TOKEN}"


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _rank(chunks: list[dict[str, Any]], path: str, line: int) -> int | None:
    for i, c in enumerate(chunks, 1):
        if c["path"] == path and c["range"]["start"]["line"] + 1 <= line <= c["range"]["end"]["line"]:
            return i
    return None


def _ragls(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ragls", *args], capture_output=True, text=True, timeout=300, env=env)


async def test_ratings_over_lsp_replay_with_the_live_ranks(
    start: Starter, workspace: Path, cache_dir: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    env = {"XDG_STATE_HOME": str(state)}
    # A repository cannot turn rating off (or on): feedback.enabled is the user's setting.
    (workspace / ".ragls.toml").write_text("[feedback]\nenabled = false\n")
    s = await start(env=env)
    st = await s.wait_ready()
    assert st["protocolVersion"] == 6
    assert any("feedback.enabled" in w for w in st["warnings"]), st["warnings"]

    invoice = workspace / "billing" / "invoice.py"
    line = _line_of(invoice, "def compute_total")
    first = await s.retrieve(QUESTION, topK=5)
    other = await s.retrieve(OTHER, topK=5)
    secret = await s.retrieve(SECRET_QUESTION, topK=3)
    for res in (first, other, secret):
        assert isinstance(res["resultId"], str) and len(res["resultId"]) >= 16, res
    assert first["resultId"] != other["resultId"]
    live_rank = _rank(first["chunks"], "billing/invoice.py", line)
    assert live_rank is not None, first["chunks"]

    up = await s.request(
        "rag/feedback",
        {
            "resultId": first["resultId"],
            "rating": "up",
            "relevant": [{"path": "billing/invoice.py", "line": line}],
            "comment": "the total with tax",
        },
    )
    assert up == {"stored": True, "folders": [workspace.name], "message": None}
    # An absolute path marks the same place; a second rating of an answer replaces the first.
    down = await s.request(
        "rag/feedback",
        {"resultId": other["resultId"], "rating": "up", "relevant": [{"path": str(invoice), "line": line}]},
    )
    assert down["stored"] is True
    down = await s.request("rag/feedback", {"resultId": other["resultId"], "rating": "down"})
    assert down["stored"] is True
    leak = await s.request(
        "rag/feedback", {"resultId": secret["resultId"], "rating": "down", "comment": f"my key is {TOKEN}"}
    )
    assert leak["stored"] is True

    for params, field in [
        ({"resultId": "0123456789abcdef", "rating": "up"}, "resultId"),
        ({"resultId": first["resultId"], "rating": "meh"}, "rating"),
        ({"resultId": first["resultId"], "rating": "up", "relevant": [{"path": "/etc/passwd", "line": 1}]}, "relevant"),
        ({"resultId": first["resultId"], "rating": "up", "relevant": [{"path": "../x.py", "line": 1}]}, "relevant"),
        ({"resultId": first["resultId"], "rating": "up", "relevant": [{"path": "a.py", "line": 0}]}, "relevant"),
    ]:
        with pytest.raises(JsonRpcException) as err:
            await s.request("rag/feedback", params)
        assert err.value.code == -32602 and field in str(err.value), (params, err.value)
    await s.close()

    # Private, outside the workspace, one file for the folder, the secret gone.
    folder = state / "ragls" / "feedback"
    stored = folder / f"{workspace_id(workspace)}.jsonl"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    raw = stored.read_text()
    assert TOKEN not in raw and "REDACTED" in raw
    assert not any("feedback" in str(p.relative_to(workspace)) for p in workspace.rglob("*.jsonl"))

    cli_env = {**os.environ, "RAGLS_CACHE_DIR": str(cache_dir), **env}
    listed = _ragls("feedback", str(workspace), "--json", env=cli_env)
    assert listed.returncode == 0, listed.stderr
    ratings = json.loads(listed.stdout)["ratings"]
    assert [(r["query"], r["rating"]) for r in ratings][:2] == [(QUESTION, "up"), (OTHER, "down")]
    assert ratings[0]["settings"] == {
        "topK": 5,
        "intent": "question",
        "paths": None,
        "languages": None,
        "mode": "hybrid",
        "kind": None,
    }
    assert ratings[0]["index"]["protocol"] == 6 and ratings[0]["index"]["model"]
    assert ratings[0]["relevant"] == [{"path": "billing/invoice.py", "line": line}]
    assert [c["path"] for c in ratings[0]["chunks"]] == [c["path"] for c in first["chunks"]]
    assert all(c["id"] for c in ratings[0]["chunks"])
    assert ratings[1]["relevant"] == []  # replaced by the later rating
    assert ratings[2]["redacted"] is True and TOKEN not in ratings[2]["query"] + (ratings[2]["comment"] or "")
    text = _ragls("feedback", str(workspace), env=cli_env)
    assert text.returncode == 0 and "3 ratings" in text.stdout and QUESTION in text.stdout

    # The same index, the same settings: the live ranks, and no answer changed.
    replay = _ragls("eval", "--feedback", str(workspace), "--json", "-q", env=cli_env)
    assert replay.returncode == 0, replay.stderr
    rep = json.loads(replay.stdout)
    cases = rep["cases"]
    assert [c["query"] for c in cases][:2] == [QUESTION, OTHER]
    assert cases[0]["ranks"] == [live_rank] and cases[0]["rank"] == live_rank == cases[0]["liveRank"]
    assert rep["mrr"] == pytest.approx(1 / live_rank) == rep["liveMrr"]
    assert [c["changed"] for c in cases[:2]] == [False, False], cases
    # The redacted question is replayed as stored, so its answer may differ: said so.
    assert cases[2]["warnings"] and "redacted" in cases[2]["warnings"][-1]
    assert "MRR" in _ragls("eval", "--feedback", str(workspace), "-q", env=cli_env).stdout

    # An edit moves the marked method to another file: the replay says which mark moved.
    source = invoice.read_text()
    method = source[source.index("    def compute_total") : source.index("    def mark_paid")]
    invoice.write_text(
        source.replace(
            method, "    def describe(self) -> str:\n        return f'{self.customer}: {len(self.items)}'\n\n" * 3
        )
    )
    (workspace / "billing" / "totals.py").write_text(
        "from decimal import Decimal\n\n\ndef compute_total(invoice) -> Decimal:\n"
        '    """Sum every line item and add the sales tax."""\n'
        "    subtotal = sum((i.unit_price * i.quantity for i in invoice.items), Decimal(0))\n"
        '    return (subtotal * (1 + invoice.tax_rate)).quantize(Decimal("0.01"))\n'
    )
    moved = json.loads(_ragls("eval", "--feedback", str(workspace), "--json", "-q", env=cli_env).stdout)
    case = moved["cases"][0]
    assert case["changed"] is True and case["liveRank"] == live_rank, case
    assert case["moved"] == [{"path": "billing/invoice.py", "line": line, "live": live_rank, "now": case["rank"]}]
    assert any(t.startswith("billing/totals.py:") for t in case["top"]), case["top"]

    # Erased on request.
    cleared = _ragls("feedback", str(workspace), "--clear", env=cli_env)
    assert cleared.returncode == 0 and "erased 3 ratings" in cleared.stdout, cleared
    assert not stored.exists()
    assert json.loads(_ragls("feedback", str(workspace), "--json", env=cli_env).stdout)["ratings"] == []


async def test_rating_off_stores_nothing(start: Starter, workspace: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    s = await start(
        env={"XDG_STATE_HOME": str(state)},
        init={"indexing": {"debounceMs": 50}, "feedback": {"enabled": False}},
    )
    await s.wait_ready()
    res = await s.retrieve(QUESTION, topK=3)
    assert res["chunks"] and res["resultId"] is None
    with pytest.raises(JsonRpcException) as err:
        await s.request("rag/feedback", {"resultId": "0123456789abcdef", "rating": "down"})
    assert err.value.code == -32602
    assert not state.exists()


async def test_an_agent_rates_answers_over_mcp(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "xdg"
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))  # mcp_session's environment is this one's
    line = _line_of(workspace / "billing" / "invoice.py", "def compute_total")
    async with mcp_session(workspace, cache) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert tools["feedback"].input_schema["required"] == ["result_id", "rating"]
        await wait_ready(s)
        search = await call(s, "search_code", {"query": QUESTION, "top_k": 4})
        rid = search.structured_content["result_id"]  # type: ignore[index]
        assert rid and rid in text_of(search)
        files = await call(s, "find_files", {"change": "Round invoice totals to whole cents", "top_k": 3})
        assert files.structured_content["result_id"]  # type: ignore[index]
        symbol = await call(s, "find_symbol", {"name": "compute_total"})
        sid = symbol.structured_content["result_id"]  # type: ignore[index]
        assert sid

        rated = await call(
            s,
            "feedback",
            {"result_id": rid, "rating": "up", "relevant": [{"path": "billing/invoice.py", "line": line}]},
        )
        assert not rated.is_error, text_of(rated)
        assert rated.structured_content == {"stored": True, "folders": [workspace.name], "message": None}
        assert "stored" in text_of(rated)
        rated = await call(s, "feedback", {"result_id": sid, "rating": "down", "comment": "wanted the caller"})
        assert not rated.is_error, text_of(rated)
        bad = await call(s, "feedback", {"result_id": "nope", "rating": "up"})
        assert bad.is_error and "result_id" in text_of(bad).lower().replace("resultid", "result_id")
        bad = await call(s, "feedback", {"result_id": rid, "rating": "sideways"})
        assert bad.is_error and "rating" in text_of(bad)

    listed = _ragls("feedback", str(workspace), "--json", env={**os.environ, "XDG_CACHE_HOME": str(cache)})
    ratings = json.loads(listed.stdout)["ratings"]
    assert [(r["method"], r["rating"]) for r in ratings] == [("rag/retrieve", "up"), ("rag/findSymbol", "down")]
    assert ratings[0]["settings"]["topK"] == 4 and ratings[0]["relevant"] == [
        {"path": "billing/invoice.py", "line": line}
    ]
    assert ratings[1]["query"] == "compute_total" and ratings[1]["chunks"][0]["symbol"] == "Invoice.compute_total"
