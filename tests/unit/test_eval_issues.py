"""Issue -> files task: the metric definitions, the question checks against the mirror, and a
whole run (checkout at the fix's parent, index, find_files and both BM25 baselines) on a tiny
real repository, without network."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ragls.evaluation.issues import (
    FIND_FILES,
    WITH_GRAPH,
    IssueQuestion,
    IssueRepo,
    IssueRepoResult,
    fix_files,
    issues_payload,
    issues_tables,
    load_questions,
    mirror_dir,
    question_scores,
    run_repo,
)
from ragls.evaluation.metrics import acc_at_k, any_at_k, file_mrr_at_k, gold_ranks
from ragls.evaluation.runner import BM25_FUNCTIONS, BM25_WINDOWS, DEFAULT
from tests.gitrepo import commit as _commit
from tests.gitrepo import git as _git

RANKED = ["a.py", "b.py", "c.py", "d.py", "e.py", "f.py"]


def test_acc_at_k_needs_every_gold_file_any_at_k_one() -> None:
    assert gold_ranks(RANKED, ["b.py", "e.py"]) == (2, 5)
    assert gold_ranks(RANKED, ["b.py", "zzz.py"]) == (2, None)
    # Two gold files at ranks 2 and 5: found by rank 5, not by rank 3, though one is in the top 3.
    assert [acc_at_k(RANKED, ["b.py", "e.py"], k) for k in (1, 3, 5, 10)] == [0.0, 0.0, 1.0, 1.0]
    assert any_at_k(RANKED, ["b.py", "e.py"], 5) == 1.0 and any_at_k(RANKED, ["b.py", "e.py"], 1) == 0.0
    # A gold file that is never returned: never "all found", though one is at rank 1.
    assert acc_at_k(RANKED, ["a.py", "zzz.py"], 10) == 0.0 and any_at_k(RANKED, ["a.py", "zzz.py"], 5) == 1.0
    assert file_mrr_at_k(RANKED, ["c.py", "f.py"]) == pytest.approx(1 / 3)
    assert file_mrr_at_k(RANKED, ["f.py"], k=5) == 0.0
    with pytest.raises(ValueError):
        gold_ranks(RANKED, [])


def test_question_scores_cut_every_system_to_ten_files() -> None:
    ranked = [f"f{i}.py" for i in range(20)]
    scores = question_scores(ranked, ["f0.py", "f12.py"])
    assert scores["acc_at_10"] == 0.0 and scores["any_at_5"] == 1.0 and scores["mrr_at_10"] == 1.0
    assert question_scores(ranked, ["f12.py"])["mrr_at_10"] == 0.0  # rank 13 is past the cut


def _question(**changes: object) -> dict[str, object]:
    q: dict[str, object] = {
        "id": "r#3",
        "repo": "o/r",
        "issue": 3,
        "url": "https://github.com/o/r/issues/3",
        "title": "t",
        "body": "b",
        "fix": "1" * 40,
        "parent": "2" * 40,
        "files": ["a.py"],
    }
    q.update(changes)
    return q


def test_questions_are_validated_when_loaded(tmp_path: Path) -> None:
    repo = IssueRepo(name="r", github="o/r", language="python", split="dev", licence="MIT", head="3" * 40)
    (tmp_path / "issues").mkdir()
    lines = tmp_path / "issues" / "r.jsonl"
    lines.write_text(json.dumps(_question()) + "\n", encoding="utf-8")
    assert [q.id for q in load_questions(tmp_path / "issues.toml", repo)] == ["r#3"]
    for bad in (
        _question(url="https://github.com/o/r/issues/4"),  # another issue's address
        _question(files=[]),  # nothing to find
        _question(files=["b.py", "a.py"]),  # unsorted
        _question(files=[f"{c}.py" for c in "abcdef"]),  # more than five
    ):
        with pytest.raises(ValueError):
            IssueQuestion.model_validate(bad)
    other = _question(repo="o/other", url="https://github.com/o/other/issues/3")
    lines.write_text(json.dumps(other) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="listed under"):
        load_questions(tmp_path / "issues.toml", repo)


def _shop(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A small shop with two fixes that each say which issue they fix, bare-cloned as a mirror."""
    work = tmp_path / "src"
    work.mkdir()
    _git(work, "init", "-q")
    _commit(
        work,
        {
            "shop/cart.py": "def cart_total(items):\n    return sum(i.price * i.qty for i in items)\n",
            "shop/tax.py": "def vat(amount, rate):\n    return amount * rate\n",
            "shop/mail.py": "def send_receipt(order, smtp):\n    smtp.send(order.email, str(order))\n",
            "README.md": "# Shop\n\nA cart, VAT and receipts by mail.\n",
        },
        "Initial import",
    )
    shas = {"base": _git(work, "rev-parse", "HEAD").strip()}
    shas["tax"] = _commit(
        work,
        {
            "shop/tax.py": "def vat(amount, rate):\n    return round(amount * rate, 2)\n",
            "tests/test_tax.py": "def test_vat():\n    assert True\n",
        },
        "Round the VAT to cents\n\nFixes #1",
    )
    shas["mail"] = _commit(
        work,
        {"shop/mail.py": "def send_receipt(order, smtp):\n    smtp.send(order.email, order.text())\n"},
        "Send the order's text (closes #2)",
    )
    mirrors = tmp_path / "mirrors"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirrors / "o+r" / "repo")], check=True)
    return mirrors, shas


def _asked(shas: dict[str, str]) -> list[IssueQuestion]:
    return [
        IssueQuestion(
            id="r#1",
            repo="o/r",
            issue=1,
            url="https://github.com/o/r/issues/1",
            title="VAT has too many decimals",
            body="The vat amount of an order shows 19.0000001 instead of a rounded amount in cents.",
            fix=shas["tax"],
            parent=shas["base"],
            files=["shop/tax.py"],
        ),
        IssueQuestion(
            id="r#2",
            repo="o/r",
            issue=2,
            url="https://github.com/o/r/issues/2",
            title="Receipt mail shows a Python object",
            body="send_receipt mails `<Order object at 0x7f>` to the customer instead of the order text.",
            fix=shas["mail"],
            parent=shas["tax"],
            files=["shop/mail.py"],
        ),
    ]


def test_fix_files_follow_the_commit_task_rule(tmp_path: Path) -> None:
    mirrors, shas = _shop(tmp_path)
    git_dir = mirror_dir(mirrors, "o/r")
    assert fix_files(git_dir, shas["base"], shas["tax"]) == ["shop/tax.py"]  # its test is not gold
    assert fix_files(git_dir, shas["tax"], shas["mail"]) == ["shop/mail.py"]


def test_run_repo_scores_find_files_and_both_baselines(tmp_path: Path) -> None:
    from ragls.config import load_settings

    mirrors, shas = _shop(tmp_path)
    repo = IssueRepo(name="r", github="o/r", language="python", split="held-out", licence="MIT", head=shas["mail"])
    asked = _asked(shas)
    # A question whose stored gold no longer matches its fix is dropped with the reason.
    stale = asked[1].model_copy(update={"id": "r#9", "issue": 9, "url": "https://github.com/o/r/issues/9"})
    settings = load_settings(None, ("test", {"cacheDir": str(tmp_path / "cache")}))
    result = run_repo(repo, [*asked, stale], mirrors, settings, tmp_path / "w", quiet=True)
    assert result.skipped is None and result.questions == 2, result
    assert result.dropped == [f"r#9: the message of {shas['mail'][:10]} does not say it fixes #9"]
    assert set(result.rows) == {FIND_FILES, WITH_GRAPH, DEFAULT, BM25_WINDOWS, BM25_FUNCTIONS}
    for row in result.rows.values():
        assert row["questions"] == 2.0
        assert row["acc_at_1"] <= row["acc_at_3"] <= row["acc_at_5"] <= row["acc_at_10"] <= 1.0
        assert row["acc_at_5"] <= row["any_at_5"]  # one gold file each: the same question
    assert result.rows[FIND_FILES]["mrr_at_10"] == 1.0, result.details
    first = result.details[0]
    assert first["id"] == "r#1" and first["files"] == ["shop/tax.py"]
    assert first["ranks"][FIND_FILES] == [1, 1]  # type: ignore[index]
    # Each question saw its parent: the second fix's file is there, the later change is not.
    assert (tmp_path / "w" / "r" / "tree" / "shop" / "tax.py").read_text().count("round") == 1
    assert "order.text()" not in (tmp_path / "w" / "r" / "tree" / "shop" / "mail.py").read_text()

    table = issues_tables([result, IssueRepoResult("gone", "o/gone", "go", "dev", 0, skipped="no mirror at x")])
    assert any(line.startswith("| **held-out** (1, 2) | ragls find_files |") for line in table.splitlines())
    assert "| gone | dev | go | skipped: no mirror at x |" in table
    payload = issues_payload([result])
    assert payload["splits"]["held-out"][FIND_FILES]["repositories"] == 1.0  # type: ignore[index]
    json.dumps(payload)  # what `ragls eval --out` writes


def test_missing_mirror_is_skipped_with_a_reason(tmp_path: Path) -> None:
    repo = IssueRepo(name="r", github="o/r", language="go", split="dev", licence="MIT", head="0" * 40)
    result = run_repo(repo, [], tmp_path, None, tmp_path)  # type: ignore[arg-type]
    assert result.skipped is not None and "no mirror" in result.skipped and result.rows == {}
