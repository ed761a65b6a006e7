"""The issue -> files task's data (eval/issues.toml, eval/issues/*.jsonl): every question is
complete and answerable, splits are by repository, and no repository is one the team may not
measure on or one another task already uses.

Run with: .venv/bin/python -m pytest eval/tests
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

EVAL = Path(__file__).resolve().parents[1]
for entry in (str(EVAL), str(EVAL.parent / "server")):
    if entry not in sys.path:
        sys.path.insert(0, entry)

from ragls.evaluation.issues import (  # noqa: E402
    MAX_GOLD,
    QUERY_CHARS,
    IssueQuestion,
    IssueRepo,
    is_gold_source,
    load_config,
    load_questions,
    referenced_issues,
)

CONFIG = EVAL / "issues.toml"

# The repositories of SWE-bench Lite: widely trained and measured on, so none is used here.
SWE_BENCH_LITE = {
    "astropy/astropy",
    "django/django",
    "matplotlib/matplotlib",
    "mwaskom/seaborn",
    "pallets/flask",
    "psf/requests",
    "pydata/xarray",
    "pylint-dev/pylint",
    "pytest-dev/pytest",
    "scikit-learn/scikit-learn",
    "sphinx-doc/sphinx",
    "sympy/sympy",
}


def _key(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum())


def _all() -> list[tuple[IssueRepo, list[IssueQuestion]]]:
    return [(repo, load_questions(CONFIG, repo)) for repo in load_config(CONFIG).repo]


def test_every_question_is_complete_and_answerable() -> None:
    total = 0
    for repo, asked in _all():
        assert len(asked) >= 5, f"{repo.name}: too few questions to mean anything"
        for q in asked:
            assert q.repo == repo.github and q.id == f"{repo.name}#{q.issue}"
            assert q.url == f"https://github.com/{repo.github}/issues/{q.issue}"
            assert q.title.strip() and len(q.text()) <= QUERY_CHARS
            assert 1 <= len(q.files) <= MAX_GOLD and all(is_gold_source(f) for f in q.files), q.id
            assert q.fix != q.parent
        total += len(asked)
    assert total >= 150


def test_splits_are_by_repository_and_cover_six_languages() -> None:
    config = load_config(CONFIG)
    held_out = [r for r in config.repo if r.split == "held-out"]
    dev = [r for r in config.repo if r.split == "dev"]
    sealed = [r for r in config.repo if r.split == "sealed"]
    assert len(config.repo) >= 10 and len(held_out) >= 8 and dev
    # A repository has one split, so no question of a held-out repository can tune anything.
    assert not {r.github.lower() for r in held_out} & {r.github.lower() for r in dev}
    assert len({r.language for r in held_out}) >= 6
    # The sealed set (read once, before and after a piece of work) spans languages too.
    assert len(sealed) >= 6 and len({r.language for r in sealed}) >= 4
    assert all(len(load_questions(CONFIG, r)) >= 8 for r in sealed)
    # No fix answers two questions (two issues fixed by one commit would count it twice).
    fixes = [q.fix for _, asked in _all() for q in asked]
    assert len(fixes) == len(set(fixes))


def test_no_repository_is_blocklisted_or_used_by_another_task() -> None:
    from goldenbuild.sources import blocklist_key, load_blocklist

    blocked = load_blocklist()
    commits = tomllib.loads((EVAL / "commits.toml").read_text(encoding="utf-8"))
    sources = tomllib.loads((EVAL / "sources.toml").read_text(encoding="utf-8"))
    elsewhere = {r["github"].lower() for r in commits["repo"]}
    # The doc->code sets name projects by their upstream name and registry package.
    projects = {_key(p[k]) for p in sources["project"] for k in ("name", "package")}
    projects |= {_key(r["github"].split("/")[1]) for r in commits["repo"]}
    for repo in load_config(CONFIG).repo:
        owner, name = repo.github.split("/")
        for part in (repo.name, owner, name):
            assert blocklist_key(part) not in blocked, part
        assert repo.github.lower() not in elsewhere | SWE_BENCH_LITE, repo.github
        assert _key(name) not in projects and _key(repo.name) not in projects, repo.github


def test_the_reference_rule_the_questions_were_drawn_by() -> None:
    assert referenced_issues("Fix panic on empty glob (fixes #1234)") == {1234}
    assert referenced_issues("Closes gh-7, resolves #8\n\nSee also #9.") == {7, 8}
    assert referenced_issues("Fix: https://github.com/o/r/issues/12") == {12}
    assert referenced_issues("Do not crash on resize, GitHub issue 4033.") == {4033}
    assert referenced_issues("Bump version (#55)") == set()


def test_gold_files_are_sources_not_tests() -> None:
    assert is_gold_source("src/ninja.cc") and is_gold_source("lib/grape/api.rb")
    for test_file in ("src/build_test.cc", "src/util_unittest.cc", "spec/grape/api_spec.rb", "tests/test_a.py"):
        assert not is_gold_source(test_file), test_file
    assert not is_gold_source("CHANGELOG.md") and not is_gold_source("docs/guide.md")


def test_no_sealed_repository_is_in_the_bundled_embedder_training_data() -> None:
    """tests/unit/test_embedder_data.py checks the held-out repositories against the shipped
    model's training data; the sealed ones must be unseen too: no package of data-manifest.json
    and no repository of commit-data-manifest.json (or their sources.toml lists) names one."""
    import json

    embedder = EVAL.parent / "scripts" / "embedder"
    if str(embedder) not in sys.path:
        sys.path.insert(0, str(embedder))
    from fetch import aliases, normalise

    sealed = {
        normalise(a)
        for repo in load_config(CONFIG).repo
        if repo.split == "sealed"
        for part in (*repo.github.split("/"), repo.name)
        for a in aliases(part)
    }
    assert sealed
    trained: set[str] = set()
    manifest = json.loads((embedder / "data-manifest.json").read_text(encoding="utf-8"))
    for entry in manifest["packages"]:
        trained |= {normalise(a) for name in [entry["package"], *entry["names"]] for a in aliases(name)}
    commit_manifest = json.loads((embedder / "commit-data-manifest.json").read_text(encoding="utf-8"))
    for entry in commit_manifest["repositories"]:
        names = [*entry["github"].split("/"), *entry.get("packages", [])]
        trained |= {normalise(a) for name in names for a in aliases(name)}
    for listing in ("sources.toml", "commit_sources.toml"):
        data = tomllib.loads((embedder / listing).read_text(encoding="utf-8"))
        for entry in [*data.get("package", []), *data.get("project", []), *data.get("repo", [])]:
            names = [entry[k] for k in ("name", "package", "github") if isinstance(entry.get(k), str)]
            names += [n for n in entry.get("packages", []) if isinstance(n, str)]
            trained |= {normalise(a) for name in names for part in name.split("/") for a in aliases(part)}
    assert not sealed & trained, sorted(sealed & trained)
