"""Commit message -> files: a second, independent retrieval task for `ragls eval`.

For each pinned public repository, the newest commits (up to the pinned head) that change one
to three existing non-test source files become questions: the query is the commit's subject
plus the first paragraph of its body, the index is the parent commit's whole tree (tests and
docs included), and the answer is the set of source files the commit changed. Scored by file
R@5 (share of the changed files among the first five distinct files returned) and file MRR
(1 / rank of the first changed file), for ragls as agents' `find_files` asks it (with the git
history a workspace at the parent commit has), as chat clients ask it (without), and for BM25
over the same files.

Histories come from bare git mirrors (`DIR/<owner>+<name>/repo`); the trees are checked out
with a private index file, so a mirror is only ever read. Nothing fetched is kept in the
repository. A missing mirror skips its repository with a message: this task is part of
`make eval`, not of the test suite.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragls.config import Settings
from ragls.evaluation.bm25 import BM25Index, function_documents, windows
from ragls.evaluation.runner import idle_index
from ragls.git import history as git_history
from ragls.git.read import message_text
from ragls.index.worker import Indexer
from ragls.query.learned import Trace
from ragls.query.retrieval import Ask, Sources, Tuning, retrieve, tuning_for, uses_source
from ragls.text import lexical
from ragls.text.languages import is_code, language_of
from ragls.text.path_kinds import is_test_path

FILE_K = 5
FILE_MRR_K = 10
SOURCE_WAIT = 300.0
HITS = 50  # chunks fetched per query to rank files (the per-file cap keeps several files)
# The MCP tool an agent plans a change with: rag/retrieve with intent "change" (the git history,
# ragls.git.history, and declarations at full weight), HITS chunks for its default 10 files. The
# plain row is rag/retrieve as chat clients call it.
FIND_FILES = "ragls find_files (+ git history)"


class Repo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    github: str = Field(pattern=r"^[\w.-]+/[\w.-]+$", description="owner/name")
    head: str = Field(pattern=r"^[0-9a-f]{40}$", description="newest commit considered")
    commits: int = Field(default=20, ge=1, description="questions taken, newest first")
    # Choices are made on dev repositories and confirmed on held-out ones (docs/evaluation.md).
    split: Literal["dev", "held-out"] = "held-out"


class CommitsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repo: list[Repo] = Field(min_length=1)


@dataclass
class CommitQuestion:
    sha: str
    parent: str
    query: str
    files: list[str]


@dataclass
class RepoResult:
    name: str
    questions: int
    split: str = "held-out"
    rows: dict[str, dict[str, float]] = field(default_factory=dict)
    skipped: str | None = None


def load_config(path: Path) -> CommitsConfig:
    return CommitsConfig.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))


def mirror_dir(root: Path, repo: Repo) -> Path:
    return root / repo.github.replace("/", "+") / "repo"


def _git(git_dir: Path, *args: str, env: dict[str, str] | None = None) -> str:
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return out.stdout


def is_source(path: str) -> bool:
    language = language_of(path)
    return language is not None and is_code(language) and not is_test_path(path)


def questions(git_dir: Path, repo: Repo) -> list[CommitQuestion]:
    """Newest first: commits with one parent changing 1-3 non-test source files that all
    existed in the parent."""
    out: list[CommitQuestion] = []
    for line in _git(git_dir, "rev-list", "--no-merges", "--parents", repo.head).splitlines():
        parts = line.split()
        if len(parts) != 2:
            continue  # root commit
        sha, parent = parts
        changes = _git(git_dir, "diff-tree", "--no-commit-id", "-r", "--name-status", "--no-renames", parent, sha)
        sources: list[str] = []
        ok = True
        for change in changes.splitlines():
            status, _, path = change.partition("\t")
            if is_source(path):
                if status != "M":
                    ok = False  # added or deleted code: no place to find in the parent
                sources.append(path)
        if not ok or not 1 <= len(sources) <= 3:
            continue
        message = _git(git_dir, "log", "-1", "--format=%B", sha)
        query = message_text(message)
        if len(query.split()) < 3:
            continue
        out.append(CommitQuestion(sha, parent, query, sorted(sources)))
        if len(out) >= repo.commits:
            break
    return out


_MISSING_BLOB = "unable to read sha1 file"


def checkout(git_dir: Path, commit: str, tree: Path, index_file: Path) -> None:
    """Make `tree` hold exactly `commit`'s files, through a private index (the mirror is
    only read). A mirror that lacks some blobs (a snapshot without its largest files: test
    fixtures, wasm, images) gives every other file, as long as none of the missing ones is a
    source file (is_source: it could be an answer or a distractor); else CalledProcessError, as
    for any failed checkout."""
    tree.mkdir(parents=True, exist_ok=True)
    env = {"GIT_INDEX_FILE": str(index_file)}
    try:
        _git(git_dir, f"--work-tree={tree}", "read-tree", "-u", "--reset", commit, env=env)
        return
    except subprocess.CalledProcessError as exc:
        if _MISSING_BLOB not in (exc.stderr or ""):
            raise
    shutil.rmtree(tree)  # read-tree stopped half-way: start from an empty tree
    tree.mkdir(parents=True)
    _git(git_dir, f"--work-tree={tree}", "read-tree", "--reset", commit, env=env)  # the index only
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", f"--work-tree={tree}", "checkout-index", "-a", "-f"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    errors = [line for line in out.stderr.splitlines() if line.startswith(("error", "fatal"))]
    missing = [m.group(1) for line in errors if (m := re.match(rf"error: {_MISSING_BLOB} of (.+) \(\w+\)$", line))]
    if out.returncode != 0 and (len(missing) < len(errors) or any(is_source(p) for p in missing)):
        raise subprocess.CalledProcessError(out.returncode, out.args, out.stdout, out.stderr)


def rank_files(paths: Sequence[str]) -> list[str]:
    """Distinct files in the order of their first hit."""
    return list(dict.fromkeys(paths))


def file_scores(ranked: Sequence[str], answer: Sequence[str]) -> tuple[float, float]:
    """(file R@5, file MRR@10) of one question."""
    wanted = set(answer)
    recall = len(wanted & set(ranked[:FILE_K])) / len(wanted)
    rank = next((i for i, path in enumerate(ranked[:FILE_MRR_K], start=1) if path in wanted), None)
    return recall, 0.0 if rank is None else 1.0 / rank


def _mean(rows: list[tuple[float, float]]) -> dict[str, float]:
    n = len(rows) or 1
    return {
        "file_recall_at_5": sum(r for r, _ in rows) / n,
        "file_mrr_at_10": sum(m for _, m in rows) / n,
        "questions": float(len(rows)),
    }


def _ragls_files(
    idx: Indexer,
    text: str,
    history: git_history.FileHistory | None,
    change: bool,
    ranker: str | None = None,
    trace: Trace | None = None,
    tuning: Tuning | None = None,
) -> list[str]:
    """As answer.answer asks it for the intent (the eval passes the history itself). `ranker`: the
    learned ranker's model file ("" the bundled one) orders the candidates; `trace`: see retrieve;
    `tuning`: in place of the intent's (an ablation)."""
    assert idx.handle.store is not None
    tuning = tuning or tuning_for("change" if change else "question")
    if ranker is not None:
        tuning = replace(tuning, learned=True, ranker_path=ranker)
    source = idx.handle.source_lexicon if uses_source(tuning, text) else None
    if source is not None:
        # The ranking a user gets once the lexicon is built (a large checkout's build can outlast
        # the 10 s a first request waits; every question opens its checkout's index afresh).
        source.wait_first(SOURCE_WAIT)
    h = idx.handle
    index = Sources(
        h.store, h.embedder, names=h.cache, history=history, files=idx.indexed_paths, source=source, graph=h.graph
    )
    hits = retrieve(index, idx.settings.retrieval, Ask(text, HITS, 0, tuning=tuning), trace).hits
    return [h.path for h in hits]


def run_repo(repo: Repo, mirrors: Path, settings: Settings, work: Path, quiet: bool = False) -> RepoResult:
    git_dir = mirror_dir(mirrors, repo)
    if not (git_dir / "HEAD").is_file():
        return RepoResult(repo.name, 0, repo.split, skipped=f"no mirror at {git_dir}")
    try:
        _git(git_dir, "cat-file", "-e", f"{repo.head}^{{commit}}")
    except subprocess.CalledProcessError:
        return RepoResult(repo.name, 0, repo.split, skipped=f"pinned head {repo.head[:12]} not in {git_dir}")
    asked = list(reversed(questions(git_dir, repo)))  # oldest first: each checkout moves little
    tree, index_file = work / repo.name / "tree", work / repo.name / "index"
    scores: dict[str, list[tuple[float, float]]] = {}
    for number, q in enumerate(asked, start=1):
        try:
            checkout(git_dir, q.parent, tree, index_file)
        except subprocess.CalledProcessError as exc:  # e.g. a mirror without its largest blobs
            why = (exc.stderr or "").strip().splitlines()[-1:] or [str(exc)]
            return RepoResult(repo.name, 0, repo.split, skipped=f"cannot check out {q.parent[:12]}: {why[0]}")
        if not quiet:
            print(f"  [{repo.name}] {number}/{len(asked)} {q.sha[:10]}", file=sys.stderr, flush=True)
        idx = idle_index(tree, settings)
        try:
            assert idx.handle.store is not None
            rs = settings.retrieval
            paths = sorted(idx.indexed_paths())
            # The history a workspace at the parent commit has (the checkout itself has no .git).
            history = git_history.load(git_dir, q.parent, rs.git_history_commits) if rs.git_history_commits else None

            systems: dict[str, Callable[[str], list[str]]] = {
                FIND_FILES: lambda text, idx=idx, history=history: _ragls_files(idx, text, history, True),  # type: ignore[misc]
                "ragls (hybrid, default)": lambda text, idx=idx: _ragls_files(idx, text, None, False),  # type: ignore[misc]
            }
            texts = {p: (tree / p).read_text("utf-8", errors="replace") for p in paths}
            for label, docs in (
                (
                    "BM25, one chunk per function",
                    [d for p in paths for d in function_documents(p, language_of(p), texts[p])],
                ),
                ("BM25, 60-line windows", [d for p in paths for d in windows(p, texts[p])]),
            ):
                bm = BM25Index(docs, tokenizer=lexical.tokenize)
                systems[label] = lambda text, bm=bm: [d.path for d in bm.search(text, HITS)]  # type: ignore[misc]
            for label, search in systems.items():
                scores.setdefault(label, []).append(file_scores(rank_files(search(q.query)), q.files))
        finally:
            idx.stop()
    return RepoResult(repo.name, len(asked), repo.split, {label: _mean(rows) for label, rows in scores.items()})


def run_commits(config: Path, mirrors: Path, settings: Settings, work: Path, quiet: bool = False) -> list[RepoResult]:
    return [run_repo(repo, mirrors, settings, work, quiet) for repo in load_config(config).repo]


def commits_table(results: list[RepoResult]) -> str:
    lines = ["| repository (commits) | split | system | file R@5 | file MRR |", "|---|---|---|---:|---:|"]
    pooled: dict[tuple[str, str], list[dict[str, float]]] = {}
    for r in results:
        if r.skipped:
            lines.append(f"| {r.name} | {r.split} | skipped: {r.skipped} | | |")
            continue
        for label, row in r.rows.items():
            lines.append(
                f"| {r.name} ({r.questions}) | {r.split} | {label} | {row['file_recall_at_5']:.3f} "
                f"| {row['file_mrr_at_10']:.3f} |"
            )
            pooled.setdefault((r.split, label), []).append(row)
    for (split, label), rows in sorted(pooled.items(), key=lambda kv: kv[0][0] != "held-out"):
        recall = sum(r["file_recall_at_5"] for r in rows) / len(rows)
        mrr = sum(r["file_mrr_at_10"] for r in rows) / len(rows)
        lines.append(f"| **mean over {split} repositories** | {split} | {label} | {recall:.3f} | {mrr:.3f} |")
    return "\n".join(lines)
