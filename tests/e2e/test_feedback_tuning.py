"""Issue 55 item 5: a ranker tuned on a folder's own ratings. Real answers from the real server
over LSP are rated with marks; `ragls feedback --tune` refuses with fewer than 20 marked
questions, refuses a tuning that loses to the default ranking on the held-back questions (with
both numbers), and otherwise writes a private model that the answers use only when the user
turns `feedback.tunedRanker` on; a model for other features is skipped with a warning."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ragls.feedback.store import tuned_file
from ragls.frontends.cli.feedback_tuning import MIN_CASES, held_back
from tests.lsp_harness import Session, Starter

pytestmark = pytest.mark.slow

TOPICS = [
    "invoice", "shipment", "coupon", "payroll", "warehouse", "ticket", "mortgage", "vaccine",
    "orchard", "glacier", "satellite", "bakery", "library", "harbor", "vineyard", "museum",
    "pharmacy", "stadium", "railway", "aquarium", "brewery", "observatory", "quarry", "lighthouse",
    "greenhouse", "tannery",
]  # fmt: skip


def _workspace(root: Path) -> Path:
    """One module and one test per topic: the question's words are in both, and the default
    ranking demotes the test (Tuning.test_penalty)."""
    for t in TOPICS:
        (root / "app").mkdir(parents=True, exist_ok=True)
        (root / "tests").mkdir(exist_ok=True)
        (root / "app" / f"{t}.py").write_text(
            f"def {t}_report(records):\n"
            f'    """Summarise the {t} records into one {t} report."""\n'
            f"    total = sum(r.amount for r in records)\n"
            f"    return {{'{t}': total, 'count': len(records)}}\n"
        )
        (root / "tests" / f"test_{t}.py").write_text(
            f"from app.{t} import {t}_report\n\n\n"
            f"def test_{t}_report_sums_records():\n"
            f'    """The {t} report summarises every {t} record."""\n'
            f"    assert {t}_report([])['{t}'] == 0\n"
        )
    return root


def _question(t: str) -> str:
    return f"summarise the {t} records into one report"


def _order(res: dict[str, Any]) -> list[str]:
    return [f"{c['path']}:{c['range']['start']['line']}" for c in res["chunks"]]


def _ragls(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ragls", *args], capture_output=True, text=True, timeout=600, env=env)


async def _rate(s: Session, topics: list[str], mark: dict[str, str]) -> dict[str, list[str]]:
    """Ask each topic's question and rate the answer, marking the topic's `mark[t]` file
    (`app` or `tests`) at its function's line; the answers' orders."""
    orders: dict[str, list[str]] = {}
    for t in topics:
        res = await s.retrieve(_question(t), topK=5)
        orders[t] = _order(res)
        path, line = (f"app/{t}.py", 1) if mark[t] == "app" else (f"tests/test_{t}.py", 4)
        stored = await s.request(
            "rag/feedback", {"resultId": res["resultId"], "rating": "up", "relevant": [{"path": path, "line": line}]}
        )
        assert stored["stored"] is True, stored
    return orders


async def test_tuning_from_ratings_is_judged_on_held_back_questions_and_opt_in(
    start: Starter, tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(tmp_path / "tuning-ws")
    state = tmp_path / "state"
    env = {"XDG_STATE_HOME": str(state)}
    monkeypatch.setenv("XDG_STATE_HOME", str(state))  # tuned_file() here names the servers' file
    cli_env = {**os.environ, "RAGLS_CACHE_DIR": str(cache_dir), **env}
    questions = [_question(t) for t in TOPICS]
    held = held_back(questions)
    assert 0 < len(held) < len(TOPICS) and len(TOPICS) >= MIN_CASES + 5

    # A tuning taught to prefer tests, judged on questions whose marks are the code: it loses.
    adverse = {t: "app" if _question(t) in held else "tests" for t in TOPICS}
    s = await start(root=ws, env=env)
    await s.wait_ready()
    rules = await _rate(s, TOPICS[:5], adverse)
    few = _ragls("feedback", str(ws), "--tune", env=cli_env)
    assert few.returncode == 1 and "5 rated answers" in few.stderr and f"at least {MIN_CASES}" in few.stderr, few
    rules |= await _rate(s, TOPICS[5:], adverse)
    await s.close()

    refused = _ragls("feedback", str(ws), "--tune", "--json", "-q", env=cli_env)
    assert refused.returncode == 1, refused.stderr
    out = json.loads(refused.stdout)
    assert (out["cases"], out["heldBack"], out["written"]) == (len(TOPICS), len(held), False), out
    assert out["mrr"] < out["defaultMrr"], out
    assert f"{out['mrr']:.3f}" in out["message"] and f"{out['defaultMrr']:.3f}" in out["message"]
    assert not tuned_file(ws).exists() and not list(tuned_file(ws).parent.glob("*.candidate"))
    cleared = _ragls("feedback", str(ws), "--clear", env=cli_env)
    assert cleared.returncode == 0 and f"erased {len(TOPICS)} ratings" in cleared.stdout

    # The user meant the tests every time: the tuning wins on the held-back questions too.
    s = await start(root=ws, env=env)
    await s.wait_ready()
    await _rate(s, TOPICS, dict.fromkeys(TOPICS, "tests"))
    await s.close()
    tuned = _ragls("feedback", str(ws), "--tune", "-q", env=cli_env)
    assert tuned.returncode == 0, tuned.stderr
    assert "held-back" in tuned.stdout and "wrote" in tuned.stdout
    model = tuned_file(ws)
    assert stat.S_IMODE(model.stat().st_mode) == 0o600 and model.parent == state / "ragls" / "feedback"
    listed = json.loads(_ragls("feedback", str(ws), "--json", env=cli_env).stdout)
    info = listed["tuned"]
    assert (info["cases"], info["heldBack"], info["tuned"]) == (len(TOPICS), len(held), len(TOPICS) - len(held))
    assert info["mrr"] >= info["defaultMrr"], info
    assert "tuned ranker" in _ragls("feedback", str(ws), env=cli_env).stdout

    # Without the user setting the answers are the default ranking's; with it, the model's.
    s = await start(root=ws, env=env)
    await s.wait_ready()
    plain = {t: _order(await s.retrieve(_question(t), topK=5)) for t in TOPICS}
    assert plain == rules
    await s.close()
    s = await start(root=ws, env=env, init={"indexing": {"debounceMs": 50}, "feedback": {"tunedRanker": True}})
    await s.wait_ready()
    mine = {t: await s.retrieve(_question(t), topK=5) for t in TOPICS}
    assert all(not r["warnings"] for r in mine.values()), mine
    firsts = [r["chunks"][0]["path"] for r in mine.values()]
    assert any(_order(r) != rules[t] for t, r in mine.items())
    assert sum(p.startswith("tests/") for p in firsts) > sum(rules[t][0].startswith("tests/") for t in TOPICS)

    # A model of other features (an older ragls's, an edit) is skipped, never an error.
    data = json.loads(model.read_text())
    model.write_text(json.dumps({**data, "features": data["features"][:-1], "weights": data["weights"][:-1]}))
    res = await s.retrieve(_question(TOPICS[0]), topK=5)
    assert res["error"] is None and _order(res) == rules[TOPICS[0]]
    assert any("tuned ranker is not used" in w and "other features" in w for w in res["warnings"]), res["warnings"]
    await s.close()

    erased = _ragls("feedback", str(ws), "--clear", env=cli_env)
    assert erased.returncode == 0 and "erased the tuned ranker" in erased.stdout
    assert not model.exists()
