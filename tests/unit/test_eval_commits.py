"""Commit message -> files task: question selection, checkout and scoring on a tiny real repo."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ragls.evaluation.commits import (
    Repo,
    checkout,
    file_scores,
    mirror_dir,
    questions,
    rank_files,
    run_repo,
)
from ragls.git.read import message_text
from tests.gitrepo import commit as _commit
from tests.gitrepo import git as _git


def test_message_query_is_subject_and_first_paragraph() -> None:
    text = "Fix rounding at unit boundaries\n\nCarry to the next unit.\nSecond line.\n\nMore detail.\n"
    assert message_text(text) == "Fix rounding at unit boundaries Carry to the next unit. Second line."
    assert message_text("Add Clone\n\nSigned-off-by: A <a@b>\n") == "Add Clone"


def test_file_scores_and_ranking() -> None:
    ranked = rank_files(["a.py", "a.py", "b.py", "c.py", "d.py", "e.py", "f.py"])
    assert ranked == ["a.py", "b.py", "c.py", "d.py", "e.py", "f.py"]
    assert file_scores(ranked, ["b.py"]) == (1.0, 0.5)
    assert file_scores(ranked, ["b.py", "f.py"]) == (0.5, 0.5)  # f.py is sixth
    assert file_scores(ranked, ["zzz.py"]) == (0.0, 0.0)


def test_questions_keep_commits_changing_one_to_three_existing_sources(tmp_path: Path) -> None:
    work = tmp_path / "src"
    work.mkdir()
    _git(work, "init", "-q")
    _commit(
        work, {"lib/a.py": "def a():\n    return 1\n", "lib/b.py": "x = 1\n", "README.md": "hi\n"}, "Initial import"
    )
    good = _commit(
        work, {"lib/a.py": "def a():\n    return 2\n", "tests/test_a.py": "x\n"}, "Make a return two\n\nBody."
    )
    _commit(work, {"lib/new.py": "y = 2\n"}, "Add a new module")  # added file: nothing to find
    _commit(work, {"README.md": "hello\n"}, "Docs only change here")  # no source file
    head = _commit(work, {"lib/b.py": "x = 2\n"}, "Tune b")  # too short a message
    mirrors = tmp_path / "mirrors"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirrors / "o+r" / "repo")], check=True)
    repo = Repo(name="r", github="o/r", head=head, commits=5)
    git_dir = mirror_dir(mirrors, repo)
    found = questions(git_dir, repo)
    assert [(q.sha, q.files, q.query) for q in found] == [(good, ["lib/a.py"], "Make a return two Body.")]
    tree, index = tmp_path / "tree", tmp_path / "index"
    checkout(git_dir, head, tree, index)
    assert (tree / "lib/new.py").is_file()
    checkout(git_dir, found[0].parent, tree, index)
    assert (tree / "lib/a.py").read_text() == "def a():\n    return 1\n"
    assert not (tree / "lib/new.py").exists()  # files of later commits are removed
    assert not (git_dir / "index").exists()  # the mirror is only read


def test_missing_mirror_is_skipped_with_a_reason(tmp_path: Path) -> None:
    repo = Repo(name="r", github="o/r", head="0" * 40)
    result = run_repo(repo, tmp_path, None, tmp_path)  # type: ignore[arg-type]
    assert result.skipped is not None and "no mirror" in result.skipped and result.rows == {}


def test_run_repo_scores_every_system_on_a_real_index(tmp_path: Path) -> None:
    from ragls.config import load_settings

    work = tmp_path / "src"
    work.mkdir()
    _git(work, "init", "-q")
    _commit(
        work,
        {
            "shop/cart.py": "def cart_total(items):\n    return sum(i.price * i.qty for i in items)\n",
            "shop/tax.py": "def vat(amount, rate):\n    return amount * rate\n",
            "shop/mail.py": "def send_receipt(order, smtp):\n    smtp.send(order.email, str(order))\n",
        },
        "Initial import",
    )
    _commit(
        work,
        {"shop/tax.py": "def vat(amount, rate):\n    return round(amount * rate, 2)\n"},
        "Round the VAT amount to cents",
    )
    head = _commit(
        work,
        {"shop/mail.py": "def send_receipt(order, smtp):\n    smtp.send(order.email, order.text())\n"},
        "Send the receipt text of the order by mail",
    )
    mirrors = tmp_path / "mirrors"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirrors / "o+r" / "repo")], check=True)
    settings = load_settings(None, ("test", {"cacheDir": str(tmp_path / "cache")}))
    result = run_repo(Repo(name="r", github="o/r", head=head, commits=5), mirrors, settings, tmp_path / "w", quiet=True)
    assert result.skipped is None and result.questions == 2
    assert set(result.rows) == {
        "ragls (hybrid, default)",
        "ragls find_files (+ git history)",
        "BM25, one chunk per function",
        "BM25, 60-line windows",
    }
    for row in result.rows.values():
        assert row["questions"] == 2.0 and 0.0 <= row["file_mrr_at_10"] <= row["file_recall_at_5"] <= 1.0
    assert result.rows["BM25, 60-line windows"]["file_recall_at_5"] == 1.0  # three files: all in the top 5
    assert result.rows["ragls (hybrid, default)"]["file_mrr_at_10"] == 1.0, result.rows
    assert result.rows["ragls find_files (+ git history)"]["file_mrr_at_10"] == 1.0, result.rows

    # A mirror that lacks a blob of a parent tree (fetched without its largest files) is skipped
    # with the reason, not a traceback.
    mirror = mirrors / "o+r" / "repo"
    blob = subprocess.run(
        ["git", f"--git-dir={mirror}", "rev-parse", f"{head}~1:shop/cart.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    packs = list((mirror / "objects" / "pack").glob("*.pack"))
    for pack in packs:  # a clone is packed: move the pack out and unpack it, to delete one object
        moved = tmp_path / pack.name
        pack.rename(moved)
        pack.with_suffix(".idx").unlink()
        with moved.open("rb") as f:
            subprocess.run(["git", f"--git-dir={mirror}", "unpack-objects", "-q"], stdin=f, check=True)
    (mirror / "objects" / blob[:2] / blob[2:]).unlink()
    broken = run_repo(
        Repo(name="r", github="o/r", head=head, commits=5), mirrors, settings, tmp_path / "w2", quiet=True
    )
    assert broken.questions == 0 and broken.skipped and broken.skipped.startswith("cannot check out"), broken


def test_commits_table_means_each_split_apart() -> None:
    from ragls.evaluation.commits import RepoResult, commits_table, load_config

    row = {"file_recall_at_5": 1.0, "file_mrr_at_10": 0.5, "questions": 2.0}
    low = {"file_recall_at_5": 0.0, "file_mrr_at_10": 0.0, "questions": 2.0}
    table = commits_table(
        [
            RepoResult("a", 2, "held-out", {"ragls": row}),
            RepoResult("b", 2, "dev", {"ragls": low}),
            RepoResult("c", 0, "dev", skipped="no mirror"),
        ]
    )
    assert "| **mean over held-out repositories** | held-out | ragls | 1.000 | 0.500 |" in table
    assert "| **mean over dev repositories** | dev | ragls | 0.000 | 0.000 |" in table
    assert "| c | dev | skipped: no mirror | | |" in table
    splits = [r.split for r in load_config(Path(__file__).resolve().parents[2] / "eval" / "commits.toml").repo]
    assert splits.count("dev") >= 3 and splits.count("held-out") >= 3


def test_a_mirror_missing_a_blob_checks_out_every_other_file(tmp_path: Path) -> None:
    """Snapshots from `fetch` can lack their largest blobs (a test fixture, a wasm file): the tree
    of a commit still holds every file the mirror has, and the next checkout moves on from it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    first = _commit(repo, {"src/app.py": "def run():\n    return 1\n", "tests/fixture.json": '{"big": 1}\n'}, "one")
    second = _commit(repo, {"src/app.py": "def run():\n    return 2\n"}, "two")
    mirror = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(mirror)], check=True)
    blob = _git(mirror, "rev-parse", f"{first}:tests/fixture.json").strip()
    (mirror / "objects" / blob[:2] / blob[2:]).unlink()  # the clone keeps loose objects: drop one
    tree, index = tmp_path / "tree", tmp_path / "index"
    checkout(mirror, first, tree, index)
    assert (tree / "src" / "app.py").read_text() == "def run():\n    return 1\n"
    assert not (tree / "tests" / "fixture.json").exists()
    checkout(mirror, second, tree, index)
    assert (tree / "src" / "app.py").read_text() == "def run():\n    return 2\n"
