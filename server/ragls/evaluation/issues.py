"""Issue -> files: the third retrieval task of `ragls eval`, the one an agent meets first.

Each question is a real issue of a public repository, as its reporter wrote it (title and
description, code and logs included), and its answer is the set of non-test source files the
commit that fixed it changed. The index is the fix's parent commit (the repository as it was
when the fix was written, tests and docs included), with the git history up to that parent, and
the question is asked as agents ask it: MCP `find_files`, i.e. rag/retrieve with intent
"change" and the file history, exactly as the commit message -> files task does
(ragls.evaluation.commits), against BM25 over 60-line windows and over one chunk per function of the non-test source files.

Scored per question on the distinct files returned (at most 10, find_files' default):
Acc@k (every gold file in the first k: a fix needs all of them), any@5 (at least one in the
first 5) and MRR@10 of the first gold file; means per repository, then per split and per
language as the plain mean of their repositories, so one repository with many questions cannot
outvote the others.

The questions live in the repository (eval/issues.toml and eval/issues/<name>.jsonl, with each
issue's address); the code comes from bare git mirrors (`DIR/<owner>+<name>/repo`), read only,
through a private index file. A missing mirror skips its repository with a message: this task
is part of `make eval`, not of the test suite.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragls.config import Settings
from ragls.evaluation.bm25 import BM25Index
from ragls.evaluation.commits import FIND_FILES, HITS, _ragls_files, checkout, is_source, rank_files
from ragls.evaluation.golden import GoldenQuery
from ragls.evaluation.metrics import acc_at_k, any_at_k, file_mrr_at_k, gold_ranks
from ragls.evaluation.ranker_data import FeatureDump
from ragls.evaluation.runner import BM25_FUNCTIONS, BM25_WINDOWS, DEFAULT, _baseline_documents, idle_index
from ragls.git import history as git_history
from ragls.query.retrieval import CHANGE_TUNING, Tuning
from ragls.text import lexical

ACC_KS = (1, 3, 5, 10)
ANY_K = 5
MRR_K = 10
# find_files returns 10 files by default (top_k): every system is cut to the same list length.
FILES = 10
# The issue text asked: title, blank line, description, as long as an agent would paste it.
QUERY_CHARS = 4000
MAX_GOLD = 5
# Repositories scored only when asked by name, at the start and the end of an issue: a split nobody
# reads while choosing still predicts code nobody has seen.
SEALED = "sealed"

METRICS = [*(f"acc_at_{k}" for k in ACC_KS), f"any_at_{ANY_K}", f"mrr_at_{MRR_K}"]
HEAD = [*(f"Acc@{k}" for k in ACC_KS), f"any@{ANY_K}", "MRR"]
# Rows of the summary tables: the product path first, then the two baselines.
SYSTEMS = (FIND_FILES, BM25_WINDOWS, BM25_FUNCTIONS)
SHORT = {FIND_FILES: "ragls find_files", BM25_WINDOWS: "BM25 windows", BM25_FUNCTIONS: "BM25 functions"}

Language = Literal[
    "python", "javascript", "typescript", "tsx", "go", "rust", "java", "kotlin", "csharp", "c", "cpp", "ruby", "php"
]
_SHA = r"^[0-9a-f]{40}$"


class IssueRepo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", description="short label, also the questions' file name")
    github: str = Field(pattern=r"^[\w.-]+/[\w.-]+$", description="owner/name")
    language: Language = Field(description="the language of its source files (per-language means)")
    # Choices are made on dev repositories and confirmed on held-out ones: stated, never defaulted.
    split: Literal["dev", "held-out", "sealed"]
    licence: str = Field(min_length=2, description="SPDX expression of the repository's licence")
    head: str = Field(pattern=_SHA, description="the mirror's newest commit when the questions were drawn")
    questions: str | None = Field(default=None, description="JSONL file, relative to the TOML (issues/<name>.jsonl)")


class IssuesConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repo: list[IssueRepo] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> IssuesConfig:
        for key in ("name", "github"):
            values = [getattr(r, key).lower() for r in self.repo]
            twice = sorted({v for v in values if values.count(v) > 1})
            if twice:
                raise ValueError(f"repositories listed twice ({key}): {', '.join(twice)}")
        return self


class IssueQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="<name>#<issue>")
    repo: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    issue: int = Field(ge=1)
    url: str = Field(description="where the issue was read: https://github.com/<repo>/issues/<issue>")
    title: str = Field(min_length=1)
    body: str = Field(description="the reporter's description, before any comment")
    fix: str = Field(pattern=_SHA, description="the commit whose message says it fixes the issue")
    parent: str = Field(pattern=_SHA, description="its only parent: the tree and history that are indexed")
    files: list[str] = Field(min_length=1, max_length=MAX_GOLD, description="non-test source files the fix changed")

    @model_validator(mode="after")
    def _consistent(self) -> IssueQuestion:
        if self.url != f"https://github.com/{self.repo}/issues/{self.issue}":
            raise ValueError(f"{self.id}: url {self.url!r} is not issue {self.issue} of {self.repo}")
        if not self.id.endswith(f"#{self.issue}"):
            raise ValueError(f"{self.id}: id does not end with #{self.issue}")
        if len(set(self.files)) != len(self.files) or self.files != sorted(self.files):
            raise ValueError(f"{self.id}: gold files must be sorted and distinct")
        return self

    def text(self) -> str:
        return f"{self.title}\n\n{self.body}".strip()[:QUERY_CHARS]


@dataclass
class IssueRepoResult:
    name: str
    github: str
    language: str
    split: str
    questions: int
    rows: dict[str, dict[str, float]] = field(default_factory=dict)
    # Per question: gold files, and per system (first gold rank, rank by which all are in) and
    # the first files returned: what the tables are made of, kept for reading the misses.
    details: list[dict[str, object]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    skipped: str | None = None


def load_config(path: Path) -> IssuesConfig:
    return IssuesConfig.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))


def questions_path(config_path: Path, repo: IssueRepo) -> Path:
    return config_path.parent / (repo.questions or f"issues/{repo.name}.jsonl")


def load_questions(config_path: Path, repo: IssueRepo) -> list[IssueQuestion]:
    path = questions_path(config_path, repo)
    out: list[IssueQuestion] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        q = IssueQuestion.model_validate(json.loads(line))
        if q.repo != repo.github or not q.id.startswith(f"{repo.name}#"):
            raise ValueError(f"{path}:{number}: question {q.id} of {q.repo} listed under {repo.github}")
        out.append(q)
    ids = [q.id for q in out]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: an issue is asked twice")
    return out


def _git(git_dir: Path, *args: str) -> str:
    # Old commit messages are not always UTF-8: a stray byte must not stop the run.
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, errors="replace", check=True
    )
    return out.stdout


def mirror_dir(root: Path, github: str) -> Path:
    """The bare mirror `fetch` writes (`repo`), or the `.git` of a snapshot with a work tree."""
    base = root / github.replace("/", "+") / "repo"
    return base / ".git" if (base / ".git" / "HEAD").is_file() else base


# An issue reference in a fix's message: "Fixes #12", "closes gh-12", "fix: #12", a fix keyword
# before the issue's address, or tmux's "GitHub issue 12".
_REFERENCE = re.compile(
    r"\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?)\b[:\s]*(?:issue\s*)?(?:#|gh-)(\d+)"
    r"|\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?)\b[:\s]*https://github\.com/[\w.-]+/[\w.-]+/issues/(\d+)"
    r"|\bgithub issue #?(\d+)",
    re.IGNORECASE,
)


def referenced_issues(message: str) -> set[int]:
    """Issue numbers a commit message says it fixes (the rule the questions were drawn by)."""
    return {int(next(g for g in m.groups() if g)) for m in _REFERENCE.finditer(message)}


def is_gold_source(path: str) -> bool:
    """A file a fix can be found in: source code, not a test (query.path_kinds.is_test_path, the rule
    ragls demotes tests by and the commit task uses; it names C/C++ unit tests next to the code
    and RSpec files outside spec/ too)."""
    return is_source(path)


def fix_files(git_dir: Path, parent: str, fix: str) -> list[str] | None:
    """The gold files of a fix by the commit task's rule: the non-test source files it changed,
    all of them already in the parent (None when it adds or deletes one: no place to find)."""
    changes = _git(git_dir, "diff-tree", "--no-commit-id", "-r", "--name-status", "--no-renames", parent, fix)
    files: list[str] = []
    for change in changes.splitlines():
        status, _, path = change.partition("\t")
        if is_gold_source(path):
            if status != "M":
                return None
            files.append(path)
    return sorted(files)


def question_scores(ranked: Sequence[str], gold: Sequence[str]) -> dict[str, float]:
    files = list(ranked[:FILES])
    scores = {f"acc_at_{k}": acc_at_k(files, gold, k) for k in ACC_KS}
    scores[f"any_at_{ANY_K}"] = any_at_k(files, gold, ANY_K)
    scores[f"mrr_at_{MRR_K}"] = file_mrr_at_k(files, gold, MRR_K)
    return scores


def _mean(rows: list[dict[str, float]]) -> dict[str, float]:
    n = len(rows) or 1
    out = {m: sum(r[m] for r in rows) / n for m in METRICS}
    out["questions"] = float(len(rows))
    return out


def _check(git_dir: Path, head: str, q: IssueQuestion) -> str | None:
    """Why a stored question no longer matches its mirror, or None when it does."""
    try:
        parents = _git(git_dir, "rev-list", "--parents", "-n", "1", q.fix).split()
        if parents[1:] != [q.parent]:
            return f"{q.id}: {q.fix[:10]} is not a one-parent child of {q.parent[:10]}"
        _git(git_dir, "merge-base", "--is-ancestor", q.fix, head)
        if q.issue not in referenced_issues(_git(git_dir, "log", "-1", "--format=%B", q.fix)):
            return f"{q.id}: the message of {q.fix[:10]} does not say it fixes #{q.issue}"
        if fix_files(git_dir, q.parent, q.fix) != q.files:
            return f"{q.id}: the gold files differ from what {q.fix[:10]} changed"
    except subprocess.CalledProcessError as exc:
        return f"{q.id}: {q.fix[:10]} cannot be read in {git_dir} ({exc.returncode})"
    return None


LEARNED = "find_files, learned ranker"
# The ablation row of the code graph's signal (retrieval.Tuning.graph_files, off by default):
# find_files with it, at the best setting measured on dev: names only, 20 files, weight 1 had the
# best Acc@5 of the variants (0.728, against 0.725 without the graph).
WITH_GRAPH = "find_files + code graph"


def ablations() -> dict[str, Tuning]:
    """Rows asked besides the systems: find_files under another tuning."""
    return {WITH_GRAPH: replace(CHANGE_TUNING, graph_files=20, graph_weight=1.0, graph_seeds=0)}


def run_repo(
    repo: IssueRepo,
    asked: list[IssueQuestion],
    mirrors: Path,
    settings: Settings,
    work: Path,
    quiet: bool = False,
    ranker: str | None = None,
    dump: Path | None = None,
    variants: dict[str, Tuning] | None = None,
) -> IssueRepoResult:
    """`ranker`: also rank with the learned ranker from this model file ("" the bundled one);
    `dump`: write each question's candidates and feature rows there (evaluation.ranker_data);
    `variants`: more rows, find_files under these tunings (default: ablations())."""
    variants = ablations() if variants is None else variants
    result = IssueRepoResult(repo.name, repo.github, repo.language, repo.split, 0)
    git_dir = mirror_dir(mirrors, repo.github)
    if not (git_dir / "HEAD").is_file():
        result.skipped = f"no mirror at {git_dir}"
        return result
    try:
        _git(git_dir, "cat-file", "-e", f"{repo.head}^{{commit}}")
    except subprocess.CalledProcessError:
        result.skipped = f"pinned head {repo.head[:12]} not in {git_dir}"
        return result
    kept: list[tuple[int, IssueQuestion]] = []
    for q in asked:
        why = _check(git_dir, repo.head, q)
        if why:
            result.dropped.append(why)
            continue
        kept.append((int(_git(git_dir, "log", "-1", "--format=%ct", q.parent).strip()), q))
    kept.sort(key=lambda pair: pair[0])  # oldest first: each checkout moves, and re-embeds, little
    tree, index_file = work / repo.name / "tree", work / repo.name / "index"
    scores: dict[str, list[dict[str, float]]] = {}
    data = FeatureDump() if dump is not None else None
    for number, (_, q) in enumerate(kept, start=1):
        try:
            checkout(git_dir, q.parent, tree, index_file)
        except subprocess.CalledProcessError as exc:  # e.g. a snapshot without its largest blobs
            why = (exc.stderr or "").strip().splitlines()[-1:] or [str(exc)]
            result.dropped.append(f"{q.id}: cannot check out {q.parent[:10]}: {why[0]}")
            continue
        if not quiet:
            print(f"  [{repo.name}] {number}/{len(kept)} #{q.issue}", file=sys.stderr, flush=True)
        idx = idle_index(tree, settings)
        try:
            if idx.handle.store is None:
                result.dropped.append(f"{q.id}: index failed: {idx.handle.fatal}")
                continue
            rs = settings.retrieval
            paths = sorted(idx.indexed_paths())
            # The history a workspace at the parent commit has (the checkout itself has no .git):
            # the fix and everything after it are out of reach.
            history = git_history.load(git_dir, q.parent, rs.git_history_commits) if rs.git_history_commits else None
            systems: dict[str, Callable[[str], list[str]]] = {
                FIND_FILES: lambda text, idx=idx, history=history: _ragls_files(idx, text, history, True),  # type: ignore[misc]
                DEFAULT: lambda text, idx=idx: _ragls_files(idx, text, None, False),  # type: ignore[misc]
            }
            if ranker is not None:
                systems[LEARNED] = lambda text, idx=idx, history=history: _ragls_files(  # type: ignore[misc]
                    idx, text, history, True, ranker=ranker
                )
            for label, tuning in variants.items():
                systems[label] = lambda text, idx=idx, history=history, tuning=tuning: _ragls_files(  # type: ignore[misc]
                    idx, text, history, True, tuning=tuning
                )
            if data is not None:  # find_files' candidates; any chunk of a fixed file answers
                gold = GoldenQuery(id=q.id, query=q.title, files=list(q.files))
                _ragls_files(idx, q.text(), history, True, trace=data.tracer(gold))
            # BM25 reads the files a fix can change (non-test source), as SWE-bench's file-level
            # BM25 reads a tree's Python files: over every file, changelogs and tests that repeat
            # an issue's words rank first. The C++ header rule of the doc->code baselines applies.
            wins, funcs = _baseline_documents(tree, [p for p in paths if is_gold_source(p)], repo.language)
            for label, docs in ((BM25_FUNCTIONS, funcs), (BM25_WINDOWS, wins)):
                bm = BM25Index(docs, tokenizer=lexical.tokenize)
                systems[label] = lambda text, bm=bm: [d.path for d in bm.search(text, HITS)]  # type: ignore[misc]
            detail: dict[str, object] = {"id": q.id, "issue": q.issue, "files": q.files, "ranks": {}, "top": {}}
            text = q.text()
            for label, search in systems.items():
                ranked = rank_files(search(text))[:FILES]
                scores.setdefault(label, []).append(question_scores(ranked, q.files))
                detail["ranks"][label] = list(gold_ranks(ranked, q.files))  # type: ignore[index]
                detail["top"][label] = ranked[:5]  # type: ignore[index]
            result.details.append(detail)
            result.questions += 1
        finally:
            idx.stop()
    result.rows = {label: _mean(rows) for label, rows in scores.items()}
    if data is not None and dump is not None:
        data.save(dump / f"issues-{repo.name}.npz", f"issues-{repo.name}", repo.language)
    if not result.questions and not result.skipped:
        result.skipped = "no question could be asked"
    return result


def run_issues(
    config: Path,
    mirrors: Path,
    settings: Settings,
    work: Path,
    quiet: bool = False,
    split: str | None = None,
    ranker: str | None = None,
    dump: Path | None = None,
    variants: dict[str, Tuning] | None = None,
) -> list[IssueRepoResult]:
    cfg = load_config(config)
    return [
        run_repo(repo, load_questions(config, repo), mirrors, settings, work, quiet, ranker, dump, variants)
        for repo in cfg.repo
        if repo.split == split or (split is None and repo.split != SEALED)
    ]


def group_means(
    results: list[IssueRepoResult], key: Callable[[IssueRepoResult], str]
) -> dict[str, dict[str, dict[str, float]]]:
    """group -> system -> metric: the plain mean over the group's repositories (each weighs the
    same), with the number of repositories and of questions."""
    groups: dict[str, dict[str, list[dict[str, float]]]] = {}
    for r in results:
        if r.skipped:
            continue
        for label, row in r.rows.items():
            groups.setdefault(key(r), {}).setdefault(label, []).append(row)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, systems in sorted(groups.items()):
        out[name] = {}
        for label, rows in systems.items():
            mean = {m: sum(row[m] for row in rows) / len(rows) for m in METRICS}
            mean["repositories"] = float(len(rows))
            mean["questions"] = float(sum(row["questions"] for row in rows))
            out[name][label] = mean
    return out


def _cells(row: dict[str, float]) -> str:
    return " | ".join(f"{row[m]:.3f}" for m in METRICS)


def _labels(results: list[IssueRepoResult]) -> list[str]:
    """The rows of the tables: the systems, then the learned ranker and the ablations asked."""
    extra = dict.fromkeys(label for r in results for label in r.rows if label not in (*SYSTEMS, DEFAULT))
    return [*SYSTEMS, *extra, DEFAULT]


def issues_tables(results: list[IssueRepoResult]) -> str:
    """Markdown: means per split and per language (over repositories), then every repository."""
    labels = _labels(results)
    head = "| " + " | ".join(HEAD) + " |"
    rule = "---:|" * len(HEAD)
    lines = [f"| split (repositories, questions) | system {head}", f"|---|---|{rule}"]
    splits = group_means(results, lambda r: r.split)
    for split in sorted(splits, key=lambda s: s != "held-out"):
        for label in labels:
            row = splits[split].get(label)
            if row:
                n = f"{int(row['repositories'])}, {int(row['questions'])}"
                lines.append(f"| **{split}** ({n}) | {SHORT.get(label, label)} | {_cells(row)} |")
    lines += ["", f"| language (repositories, questions) | system {head}", f"|---|---|{rule}"]
    for lang, systems in group_means(results, lambda r: r.language).items():
        for label in SYSTEMS:
            row = systems.get(label)
            if row:
                n = f"{int(row['repositories'])}, {int(row['questions'])}"
                lines.append(f"| {lang} ({n}) | {SHORT[label]} | {_cells(row)} |")
    lines += ["", f"| repository (questions) | split | language | system {head}", f"|---|---|---|---|{rule}"]
    for r in results:
        if r.skipped:
            lines.append(f"| {r.name} | {r.split} | {r.language} | skipped: {r.skipped} |" + " |" * len(HEAD))
            continue
        for label in labels:
            row = r.rows.get(label)
            if row:
                lines.append(
                    f"| {r.name} ({r.questions}) | {r.split} | {r.language} | {SHORT.get(label, label)} | {_cells(row)} |"
                )
    return "\n".join(lines)


def issues_payload(results: list[IssueRepoResult]) -> dict[str, object]:
    """The task's part of `ragls eval --out`: means per split and language, every repository."""
    return {
        "splits": group_means(results, lambda r: r.split),
        "languages": group_means(results, lambda r: r.language),
        "repositories": [r.__dict__ for r in results],
    }
