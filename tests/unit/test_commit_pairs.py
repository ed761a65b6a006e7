"""The commit-history miner of the embedder's change-description pairs (scripts/embedder/commit_pairs.py):
the query is the cleaned commit message, the positives are the chunks of the parent that the
commit changed, exactly as ragls embeds them, and excluded projects are refused."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.gitrepo import commit, git

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "embedder"))

from commit_pairs import (  # noqa: E402
    Excluded,
    RepoJob,
    changed_rows,
    check_repo,
    chunk_pieces,
    clean_message,
    evaluated_names,
    excluded_path,
    is_test_symbol,
    licence_agrees,
    licence_of,
    mine_repo,
    overlapping,
    repo_names,
    validation_repos,
)
from fetch import name_hash, normalise  # noqa: E402

from ragls.chunking import chunk_file  # noqa: E402

MIT = (
    "MIT License\n\nCopyright (c) 2026 t\n\nPermission is hereby granted, free of charge, to any\n"
    "person obtaining a copy of this software\n"
)
CALC = """\
def total_price(items, discount):
    subtotal = sum(item.price for item in items)
    return round(subtotal, 2)


def shipping_cost(weight):
    if weight > 10:
        return 15.0
    return 5.0


def tax_rate(country):
    rates = {"de": 0.19, "fr": 0.2}
    return rates.get(country, 0.0)
"""
UTIL = """\
def format_price(value):
    return f"{value:.2f} EUR"


def parse_price(text):
    return float(text.replace("EUR", "").strip())
"""


def test_message_is_cleaned_of_references_trailers_and_templates() -> None:
    message = (
        "Fix rounding of the total price (#12)\n\n"
        "The total ignored the discount, see https://example.test/issue/11.\n\n"
        "## Checklist\n- [x] tests added\n\n"
        "Fixes #11\nSigned-off-by: Some One <one@example.test>\nCo-authored-by: Two <two@example.test>\n"
    )
    assert clean_message(message) == "Fix rounding of the total price. The total ignored the discount"
    merge = "Merge pull request #7 from someone/branch\n\nHandle empty headers in the parser (#7)\n"
    assert clean_message(merge, merge=True) == "Handle empty headers in the parser"
    squash = "Check the config in CI (#9)\n\n* Check the config in CI\n\n* Read the config lazily\n"
    assert clean_message(squash) == "Check the config in CI. Read the config lazily"


@pytest.mark.parametrize(
    "message",
    [
        "Merge branch 'main' into feature",
        "Merge pull request #3 from someone/branch",  # a merge without a body
        "Bump version to 2.1.0",
        "Release 3.0.0",
        "chore(deps): update dependency foo to v2",
        "Fix typo in parser",
        "cargo fmt",
        'Revert "Add the cache"',
        "update",
        "wip",
        "…\n\n…",  # nothing but punctuation
    ],
)
def test_commits_that_describe_no_code_change_give_no_query(message: str) -> None:
    assert clean_message(message, merge=message.startswith("Merge")) is None


def test_changed_rows_are_parent_lines_and_insertions_mark_their_neighbours() -> None:
    patch = (
        "diff --git a/pkg/calc.py b/pkg/calc.py\n--- a/pkg/calc.py\n+++ b/pkg/calc.py\n"
        "@@ -3 +3,2 @@ def total_price(items, discount):\n-    return round(subtotal, 2)\n+    x\n+    y\n"
        "@@ -9,0 +11 @@ def shipping_cost(weight):\n+    pass\n"
        "diff --git a/pkg/new.py b/pkg/new.py\n--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+x = 1\n"
    )
    assert changed_rows(patch) == {"pkg/calc.py": {3, 9, 10}}


def test_hunks_select_the_chunks_they_overlap() -> None:
    pieces = chunk_pieces("pkg/calc.py", CALC)
    hit = overlapping(pieces, {3})
    assert [p.symbol for _, p in hit] == ["total_price"]
    assert (
        hit[0][1].text
        == next(c for c in chunk_file("pkg/calc.py", "python", CALC) if c.symbol == "total_price").embedding_text()
    )
    assert {p.symbol for _, p in overlapping(pieces, {5, 6})} == {"shipping_cost"}  # blank line 5 is in no chunk


def test_exclusions_blocklist_evaluated_projects_and_vendored_copies(tmp_path: Path) -> None:
    blocklist = {name_hash("secretlib")}
    commits = tmp_path / "commits.toml"
    commits.write_text('[[repo]]\nname = "x"\ngithub = "someorg/evalproj"\nhead = "' + "a" * 40 + '"\nsplit = "dev"\n')
    issues = tmp_path / "issues"
    issues.mkdir()
    (issues / "y.jsonl").write_text(json.dumps({"repo": "other/issuerepo", "issue": 1}) + "\n")
    evaluated, _ = evaluated_names([], {}, commits, issues, None, ["cand/reservedrepo"])
    assert {"evalproj", "someorg", "issuerepo", "reservedrepo"} <= evaluated
    with pytest.raises(Excluded, match="blocklist"):
        check_repo(repo_names("someone/secretlib"), blocklist, evaluated, "someone/secretlib")
    with pytest.raises(Excluded, match="blocklist"):  # a package the repository publishes
        check_repo(repo_names("someone/wrapper", ["secretlib"]), blocklist, evaluated, "someone/wrapper")
    for github in ("someorg/anything", "fork/evalproj", "x/issuerepo", "cand/reservedrepo", "golang/issuerepo.go"):
        with pytest.raises(Excluded, match="evaluated"):
            check_repo(repo_names(github), blocklist, evaluated, github)
    check_repo(repo_names("fine/project"), blocklist, evaluated, "fine/project")
    assert excluded_path("src/secretlib/a.c", blocklist, evaluated) is not None
    assert excluded_path("packages/evalproj/src/a.ts", blocklist, evaluated) is not None
    assert excluded_path("third/issuerepo/a.cpp", blocklist, evaluated) is not None
    assert excluded_path("src/core/a.c", blocklist, evaluated) is None
    assert normalise("Issue-Repo") == "issuerepo"


def test_licence_text_must_be_permissive_and_agree() -> None:
    assert licence_of({"LICENSE": MIT}) == ("MIT", "LICENSE")
    gpl = "GNU GENERAL PUBLIC LICENSE\nVersion 3\n"
    assert licence_of({"LICENSE-MIT": MIT, "COPYING": gpl})[0] == "GPL"
    assert licence_agrees("MIT", "MIT") and licence_agrees("MIT OR Apache-2.0", "Apache-2.0 AND MIT")
    assert not licence_agrees("MIT", "GPL") and not licence_agrees("MIT", "unknown")
    assert not licence_agrees("BSD-3-Clause", "MIT")


def _job(repo: Path, **kw: object) -> RepoJob:
    fields: dict[str, object] = {
        "github": "t/shop",
        "language": "python",
        "licence": "MIT",
        "git_dir": str(repo / ".git"),
        "max_commits": 100,
        "max_pairs": 100,
        "max_files": 8,
        "max_chunks": 12,
        "seed": 1,
        "blocklist": frozenset(),
        "evaluated": frozenset(),
    }
    fields.update(kw)
    return RepoJob(**fields)  # type: ignore[arg-type]


def test_mined_pair_is_the_parent_chunk_the_commit_changed(tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, {"LICENSE": MIT, "pkg/calc.py": CALC, "pkg/util.py": UTIL}, "Add the shop")
    parent = git(repo, "rev-parse", "HEAD").strip()
    fixed = CALC.replace("return round(subtotal, 2)", "return round(subtotal * (1 - discount), 2)")
    sha = commit(
        repo,
        {"pkg/calc.py": fixed},
        "Apply the discount to the total price (#12)\n\nThe total ignored the discount.\n\nFixes #11\n"
        "Signed-off-by: Some One <one@example.test>",
    )
    commit(repo, {"tests/test_calc.py": "def test_total():\n    assert True\n"}, "Add a test for the total price")
    commit(repo, {"pkg/util.py": UTIL.replace("EUR", "EUR ")}, "Fix typo in the price format")
    (repo / "pkg/calc.py").write_text(fixed.replace("15.0", "16.0"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--author", "dependabot[bot] <bot@example.test>", "-m", "Raise the heavy shipping cost")
    git(repo, "commit", "-q", "--allow-empty", "-m", "Bump version to 1.0.1")

    result = mine_repo(_job(repo))
    pairs = result["pairs"]
    assert [p["commit"] for p in pairs] == [sha]
    pair = pairs[0]
    assert pair["query"] == "Apply the discount to the total price. The total ignored the discount."
    old_chunk = next(c for c in chunk_file("pkg/calc.py", "python", CALC) if c.symbol == "total_price")
    assert pair["code"] == old_chunk.embedding_text()  # the parent's code, as the indexer embeds it
    assert (pair["parent"], pair["path"], pair["language"], pair["files"]) == (
        parent,
        "pkg/calc.py",
        "python",
        ["pkg/calc.py"],
    )
    assert 2 <= len(pair["negatives"]) <= 3 and pair["code"] not in pair["negatives"]
    # Negatives come from the unchanged chunks of the file and of its sibling.
    siblings = {p.text for p in chunk_pieces("pkg/calc.py", CALC) + chunk_pieces("pkg/util.py", UTIL)}
    assert set(pair["negatives"]) <= siblings
    assert result["skipped"]["bot"] == 1
    assert result["licence_files"]["head"] == {"licence": "MIT", "files": "LICENSE"}

    # A declared licence the files do not show refuses the repository.
    assert "refused" in mine_repo(_job(repo, licence="Apache-2.0"))
    # A folder of a blocklisted project inside the repository is never mined.
    assert mine_repo(_job(repo, blocklist=frozenset({name_hash("pkg")})))["pairs"] == []


def test_validation_split_is_by_repository_and_keeps_every_language() -> None:
    repos = [(f"o/{lang}{i}", lang, {lang: 100}) for lang in ("python", "go", "rust") for i in range(4)]
    repos += [("o/c0", "c", {"c": 100}), ("o/tsx0", "tsx", {"tsx": 500}), ("o/tsx1", "tsx", {"tsx": 50})]
    repos += [("o/tsx2", "tsx", {"tsx": 50})]
    val = validation_repos(repos, 0.25, 7)
    assert len(val) == 4 and {dict((r, lang) for r, lang, _ in repos)[r] for r in val} >= {"python", "go", "rust"}
    assert "o/c0" not in val  # a language with fewer than 3 repositories is not held back
    assert "o/tsx0" not in val  # it holds most of its language's pairs
    assert val == validation_repos(repos, 0.25, 7)


def test_tests_inside_source_files_are_no_positives() -> None:
    assert is_test_symbol("tests.parses_flags", "rust") and is_test_symbol("TestParse", "go")
    assert is_test_symbol("TestCart.test_total", "python") and is_test_symbol("test_total", "python")
    assert not is_test_symbol("BenchmarkDotNet.Running.BenchmarkRunner.Run", "csharp")
    assert not is_test_symbol("TestClient.request", "python") and not is_test_symbol("Benchmark", "go")
