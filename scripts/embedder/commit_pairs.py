#!/usr/bin/env python3
"""(change description, changed code) pairs from the commit histories of public repositories.

The commit task of `ragls eval` asks "which code does this change touch?" with a commit
message; the doc-summary pairs of the bundled model never show it a description of a change,
and the registry releases of release_pairs.py give few. Git histories hold that pairing
directly. For every repository of commit_sources.toml (bare git mirrors brought with the
search tool's `fetch`, `<mirrors>/<owner>+<name>/repo`), over its newest `max_commits`
first-parent commits:

- skipped: bots, release/version-bump/changelog/merge-without-body commits, reverts,
  formatting/lint/typo commits (by subject, and any commit whose diff is whitespace only),
  commits touching more than `max_files` files, commits that change no existing non-test
  source file (tests/docs only), sweeps (more than `max_chunks` chunks changed);
- query: the subject and body, cleaned (clean_message): trailers (Signed-off-by, Co-authored-by,
  Change-Id...), issue/PR references ("(#123)", "Fixes #12" lines, GH-12, URLs), PR-template
  headings, checklists and HTML comments, code blocks and @mentions removed; a first-parent
  merge of a pull request is its PR title and description (the "Merge pull request #N from
  ..." line dropped) and its diff is against the first parent;
- positives: ragls's own chunks (`ragls.chunking.chunk_file`, default IndexingSettings,
  `Chunk.embedding_text()`, exactly what the model embeds) of the changed source files *at the
  parent commit* that overlap the changed lines (`git diff -w -U0`), definitions first, then by
  changed lines, at most 3 per commit: the code a developer would have had to find;
- hard negatives: 3 chunks of the same files or of sibling source files (same folder) at the
  parent that the commit did not touch, ranked by BM25 (ragls.text.lexical's tokens) against the
  query; near copies of a positive (token Jaccard >= 0.9) are dropped;
- at most `max_pairs_per_repo` pairs per repository, newest commits first.

Exclusions are enforced before a mirror is read (refused, with the reason, in the manifest):
a GitHub owner or name (with fetch.aliases, and any `packages` the source declares) on the
training blocklist, or the name of an evaluated project: eval/sources.toml (with the
[related] projects of sources.toml), both splits of eval/commits.toml, eval/issues.toml and
every repository named in eval/issues/*.jsonl, and `reserved` (candidates of evaluation
tasks). Inside a monorepo, a package folder (packages/<name>/, crates/<name>/ ...) whose name
is blocklisted or evaluated is skipped. The licence is read from the LICENSE/COPYING file at
the newest and at the oldest mined commit; both must be permissive and agree with the licence
the source declares.

    nice -n 10 .venv/bin/python scripts/embedder/commit_pairs.py --mirrors /work/.mirror \\
        --blocklist /work/shared/training-blocklist.txt
    .venv/bin/python scripts/embedder/commit_pairs.py --check-only   # re-check the manifest

Writes ~/.cache/ragls-train/commit-pairs.jsonl (training repositories), commit-negatives.jsonl
(the best negative of each training pair, keyed for train.py --negatives),
commit-pairs-val.jsonl (the held-back validation repositories, `validation_share` of them,
chosen with the seed, one language at a time) and scripts/embedder/commit-data-manifest.json
(every repository with its licence, commit range, counts and split; every refusal; the sha256
of both outputs). A pair: {"query", "code" (the positive), "negatives", "repo", "commit",
"parent", "language", "path", "symbol", "kind", "files" (every path the commit changed),
"package" (= repo, for train.py's per-project batches)}.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import math
import os
import random
import re
import subprocess
import sys
import time
import tomllib
from collections import Counter, OrderedDict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(1, str(HERE))

import fetch  # noqa: E402
from pairkey import pair_key  # noqa: E402

from ragls.chunking import chunk_file  # noqa: E402
from ragls.chunking.code import SPECS  # noqa: E402
from ragls.config import IndexingSettings, Settings  # noqa: E402
from ragls.query.retrieval import is_test_path  # noqa: E402
from ragls.text.languages import language_of  # noqa: E402
from ragls.text.lexical import tokenize  # noqa: E402

MINER_VERSION = 3  # bump when a change to the mining rules makes kept per-repository results stale
MAX_POSITIVES = 3
NEGATIVES = 3
MAX_QUERY_CHARS = 600
MAX_FILE_BYTES = Settings().max_file_bytes  # what a workspace index holds
MAX_SIBLINGS = 12  # sibling files per folder, for negatives
MIN_CODE_CHARS = 40

# ------------------------------------------------------------------ what a source file is

# Built, vendored, generated, documentation, example and test trees: not the project's own code
# a developer edits (or, for tests and docs, not what the pairs are about).
_NOT_SOURCE = re.compile(
    r"(^|/)(vendor|vendored|_vendor|third[_-]?party|3rd[_-]?party|external|deps|node_modules|dist|build|out|target"
    r"|bundles?|min|generated|__generated__|gen|single_include|amalgamat\w*|docs?|documentation|website|site"
    r"|examples?|samples?|demos?|benchmarks?|bench|fixtures?|testdata|tests?|specs?|__tests__|__mocks__|testing"
    r"|e2e|playground|scripts?|tools?/release)/"
    r"|\.min\.[cm]?js$|\.d\.[cm]?ts$|_pb2\.py$|\.pb\.(go|cc|h)$|\.generated\.\w+$|\.g\.cs$|\.Designer\.cs$"
    r"|(^|/)(vendor|package-lock|yarn\.lock)\b",
    re.I,
)
# Folders that hold one package each in a monorepo: their names are checked like a repository's.
_PACKAGE_PARENTS = {"packages", "crates", "libs", "modules", "plugins", "extensions", "components", "apps"}


def is_source(path: str) -> bool:
    """A non-test, non-generated file in a language ragls chunks along the syntax tree."""
    return language_of(path) in SPECS and not is_test_path(path) and not _NOT_SOURCE.search(path)


# ------------------------------------------------------------------ messages

_BOT = re.compile(
    r"\[bot\]|dependabot|renovate|greenkeeper|snyk|github-actions|pre-commit-ci|allcontributors|imgbot|mergify"
    r"|semantic-release|release-please|deepsource|restyled|web-flow-bot|copilot",
    re.I,
)
# Subjects that announce no code change a user would search for.
_SKIP_SUBJECT = re.compile(
    r"^\W*(release|releasing|released|prepare|preparing|bump|bumped|version|v?\d+\.\d+(\.\d+)?\b"
    r"|changelog|update (the )?(changelog|changes|history|news|version|dependencies|deps|copyright|license|readme|docs)"
    r"|merge (branch|remote|tag|pull request|commit|master|main|develop)|merged? |revert|reapply|back ?port|cherry[- ]pick"
    r"|wip\b|squash|fixup!|amend!|initial commit|first commit|auto-?generated|regenerate|update generated"
    r"|(chore|ci|docs?|build|test|tests|style|release|deps|revert)(\([^)]*\))?!?:)"
    r"|\b(bump(ed)? (version|to v?\d)|version \d+\.\d+|\d+\.\d+\.\d+ release|prepare (for )?\d+\.\d+|\[release\])",
    re.I,
)
_FORMAT_SUBJECT = re.compile(
    r"^\W*((run|apply|ran|applied)\s+)?(cargo fmt|go ?fmt|rustfmt|clang-format|prettier|black|isort|ruff format"
    r"|php-cs-fixer|eslint --fix|rubocop -a|ktlint -F|spotless)"
    r"|^\W*(fix(es|ed)?\s+)?(typos?|spelling|whitespaces?|formatting|reformat(ted)?|format(ting)? code|fmt|lint(ing|s)?"
    r"|code style|coding style|indentation|trailing whitespace)\b"
    r"|\b(fix|fixed|fixes|correct|corrected)\s+(a |an |some |the |two |more |minor |several )*(typos?|spelling|misspell\w*"
    r"|lint (errors|warnings|issues)|linter (errors|warnings|issues)|formatting|whitespace|indentation)\b"
    r"|^\W*(typo|fmt|lint|format|formatting|style|cleanup|clean up|tidy|update|updates|fix|fixes|minor|tweak|tweaks"
    r"|refactor|wip|misc|changes|more|stuff|oops|test|tests)\W*$",
    re.I,
)
# Trailer lines ("Key: value" at the end of a message, Git's convention) and reference-only lines.
_TRAILER = re.compile(
    r"^\s*((signed|acked|reviewed|tested|reported|suggested|helped|co-authored|co-developed|authored|approved"
    r"|requested|cc|thanks|original-commit|change-id|pr-url|pr|issue|ref|refs|see-also|bug|closes?|fixes|fixed"
    r"|resolves?|related|part-of|backport|cherry-picked)[\w-]*\s*:|\(cherry picked from commit|git-svn-id:)",
    re.I,
)
_REF_LINE = re.compile(
    r"^\W*(fix(es|ed)?|close[sd]?|resolve[sd]?|refs?|references?|see|related( to)?|part of|relates to|for|addresses"
    r"|supersedes|replaces|follow[- ]?up( to| of)?|issue|pr|pull request|re|cf\.?|also)\b[\s:,]*"
    r"((and|,|&)?\s*(#\d+|gh-\d+|[\w.-]+/[\w.-]+#\d+|https?://\S+|[A-Z][A-Z0-9]+-\d+|issue \d+)[.,;]?\s*)+$",
    re.I,
)
_MERGE_PR = re.compile(r"^Merge (pull request|branch|remote-tracking branch|tag|commit|changes) ", re.I)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*(.*)$")
_TEMPLATE_HEADING = re.compile(
    r"^(checklist|pr checklist|todo|screenshots?|test(ing)? plan|how (has this been|to) test\w*|testing|tests"
    r"|related issues?|issues?|references?|links?|notes? (for|to) reviewers?|additional (context|notes|info\w*)"
    r"|type of change|breaking changes?\??|changelog|release notes?|docs?|documentation|before|after)\b",
    re.I,
)


def _clean_line(line: str) -> str:
    s = line
    s = re.sub(r"<!--.*?-->", "", s)
    s = re.sub(r"\[(skip ci|ci skip|no ci|skip changelog|changelog skip|skip-changelog)\]", "", s, flags=re.I)
    # A PR/issue reference in any form: (#123), [#123], (fixes #12, closes gh-3), owner/repo#12, GH-12, #12.
    s = re.sub(
        r"\((\s*(fix(es|ed)?|close[sd]?|resolve[sd]?|refs?|see|for|via|pr|issue)?\s*"
        r"(#\d+|gh-\d+|[\w.-]+/[\w.-]+#\d+|!\d+)\s*[,;]?)+\)",
        "",
        s,
        flags=re.I,
    )
    s = re.sub(r"\[\s*(fix(es)?\s*)?#\d+(\s*,\s*#?\d+)*\s*\]", "", s, flags=re.I)
    s = re.sub(
        r"\b(fix(es|ed)?|close[sd]?|resolve[sd]?|refs?|see|towards|part of|related to)\s*:?\s*"
        r"((#\d+|gh-\d+|[\w.-]+/[\w.-]+#\d+|https?://\S+)[\s,;]*(and\s+)?)+",
        "",
        s,
        flags=re.I,
    )
    s = re.sub(r"\[([^\]]+)\]\((https?://[^)]*)\)", r"\1", s)  # a markdown link: its text
    s = re.sub(r"<?https?://[^\s)>]+>?", "", s)
    s = re.sub(r"(^|[\s(])([\w.-]+/[\w.-]+)?#\d+\b|\bgh-\d+\b|(^|\s)!\d+\b", r"\1", s, flags=re.I)
    s = re.sub(r"\b[0-9a-f]{12,40}\b", "", s)  # commit hashes
    s = re.sub(r"<?[\w.+-]+@[\w-]+(\.[\w-]+)+>?", "", s)  # e-mail addresses
    s = re.sub(r"(^|\s)@[\w-]+(/[\w-]+)?", r"\1", s)  # @mentions
    s = re.sub(r"^\s*([-*+]|\d+[.)])\s+(\[[ xX]\]\s*)?", "", s)  # list markers, checkboxes
    s = re.sub(r"\(\s*\)|\[\s*\]", "", s)
    return re.sub(r"\s+", " ", s).strip(" -:;,")


def _norm(line: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", line.lower()).strip()


def _is_noise(line: str) -> bool:
    """Benchmark tables, pasted output, paths and numbers: a line that is not mostly words."""
    tokens = line.split()
    if len(tokens) < 4:
        return False
    words = sum(1 for t in tokens if re.fullmatch(r"[A-Za-z][a-z'’-]*[,.;:!?)]*|\(?[a-z]+", t))
    return words / len(tokens) < 0.5


def clean_message(message: str, merge: bool = False) -> str | None:
    """The commit's description as a query (subject and body, cleaned), or None when the
    commit describes no code change a user would search for (see the module docstring)."""
    text = message.replace("\r\n", "\n").replace("\r", "\n")
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"^(```|~~~).*?^(```|~~~)\s*$", "", text, flags=re.S | re.M)  # fenced code
    lines = text.strip().split("\n")
    if not lines or not lines[0].strip():
        return None
    if merge or _MERGE_PR.match(lines[0]):
        if not _MERGE_PR.match(lines[0]):
            pass  # a merge whose subject is a description (squash-style): keep it
        else:
            lines = lines[1:]  # "Merge pull request #N from user/branch": the PR title follows
            while lines and not lines[0].strip():
                lines = lines[1:]
            if not lines:
                return None  # a merge without a body says nothing
    subject = lines[0].strip()
    if _SKIP_SUBJECT.search(subject) or _FORMAT_SUBJECT.search(subject):
        return None
    kept: list[str] = []  # paragraphs and list items, each on one line
    in_template = False
    joins = False  # the next line continues the last paragraph (bodies are hard-wrapped)
    for number, raw in enumerate(lines):
        if not raw.strip():
            joins = False
            continue
        if re.match(r"^\s*(-{3,}|\*{3,}|_{3,})\s*$", raw):
            break  # a rule: what follows is a template, a changelog or a signature
        if _TRAILER.match(raw) or _REF_LINE.match(raw.strip()):
            joins = False
            continue
        if raw.startswith(("    ", "\t")) and number > 0:
            joins = False
            continue  # indented code, a pasted log or traceback
        if raw.lstrip().startswith(">"):
            joins = False
            continue  # quoted text
        heading = _HEADING.match(raw)
        if heading:
            joins = False
            in_template = bool(_TEMPLATE_HEADING.match(heading.group(1).strip(" :*")))
            title = heading.group(1).strip(" :*")
            if re.match(
                r"^(summary|description|what|why|motivation|changes?|context|problem|solution|overview)\b", title, re.I
            ):
                continue  # a template's heading: its text follows
            if not in_template:
                kept.append(title)
            continue
        if in_template:
            continue
        if re.match(r"^\s*[-*+]\s*\[[ xX]\]", raw):
            joins = False
            continue  # a checklist item
        item = bool(re.match(r"^\s*([-*+]|\d+[.)])\s+", raw))
        line = _clean_line(raw)
        if not line or _is_noise(line):
            joins = False
            continue
        if joins and not item and kept:
            kept[-1] = f"{kept[-1]} {line}"
        else:
            kept.append(line)
        joins = number > 0  # the subject is a paragraph of its own
    if not kept:
        return None
    # GitHub cuts a long PR title with "…" and carries the rest into the body.
    if len(kept) > 1 and kept[0].endswith(("…", "...")) and kept[1].startswith(("…", "...")):
        kept[:2] = [kept[0].rstrip("….") + kept[1].lstrip("….")]
    unique: list[str] = []
    for line in kept:
        key = _norm(line)
        if key and not any(key == _norm(u) or key in _norm(u) for u in unique):
            unique.append(line)  # a squash merge repeats the title as its first bullet
    kept = unique
    if not kept:
        return None
    query = kept[0].rstrip(".")
    for line in kept[1:]:
        sep = " " if query.endswith((".", ":", "!", "?", ",")) else ". "
        if len(query) + len(sep) + len(line) > MAX_QUERY_CHARS:
            room = MAX_QUERY_CHARS - len(query) - len(sep)
            if room > 40:
                query += sep + line[:room].rsplit(" ", 1)[0]
            break
        query += sep + line
    query = re.sub(r"\s+", " ", query).strip()
    if len(query) < 15 or len(query.split()) < 3 or not re.search(r"[A-Za-z]{3}", query):
        return None
    return query


def is_bot(author: str, email: str) -> bool:
    return bool(_BOT.search(author) or _BOT.search(email))


# ------------------------------------------------------------------ diffs and chunks

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def changed_rows(patch: str) -> dict[str, set[int]]:
    """Old-side (parent) 1-based lines each file's hunks change, from a `git diff -U0` patch.
    A pure insertion after line n marks n and n + 1: the code around the new lines."""
    out: dict[str, set[int]] = {}
    path: str | None = None
    for line in patch.split("\n"):
        if line.startswith("diff --git "):
            path = None
        elif line.startswith("--- "):
            old = line[4:].strip()
            path = old[2:] if old.startswith("a/") else None  # /dev/null: an added file
            if path is not None:
                out.setdefault(path, set())
        elif line.startswith("@@") and path is not None:
            m = _HUNK.match(line)
            if not m:
                continue
            start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
            if count == 0:
                out[path].update({max(1, start), start + 1})
            else:
                out[path].update(range(start, start + count))
    return out


def added_counts(patch: str) -> dict[str, int]:
    """Lines added per new-side path (to weigh new files against changed ones)."""
    out: Counter[str] = Counter()
    path: str | None = None
    for line in patch.split("\n"):
        if line.startswith("+++ "):
            new = line[4:].strip()
            path = new[2:] if new.startswith("b/") else None
        elif line.startswith("+") and not line.startswith("+++") and path is not None:
            out[path] += 1
    return dict(out)


@dataclass(frozen=True)
class Piece:
    """One chunk as the miner keeps it: what is embedded, where, and its BM25 terms."""

    path: str
    language: str
    start: int
    end: int
    kind: str
    symbol: str
    text: str  # Chunk.embedding_text()
    terms: Counter[str] = field(compare=False, hash=False, default_factory=Counter)


_DEFINITIONS = {"function", "method", "class", "class_header", "declaration"}


def chunk_pieces(path: str, text: str, settings: IndexingSettings | None = None) -> list[Piece]:
    language = language_of(path)
    if language is None:
        return []
    out = []
    for c in chunk_file(path, language, text, settings):
        embedded = c.embedding_text()
        if len(c.text.strip()) >= MIN_CODE_CHARS:
            out.append(
                Piece(
                    path,
                    c.language,
                    c.start_line,
                    c.end_line,
                    c.kind,
                    c.symbol or "",
                    embedded,
                    Counter(tokenize(embedded)),
                )
            )
    return out


def overlapping(pieces: list[Piece], rows: set[int]) -> list[tuple[int, Piece]]:
    """(changed lines inside, piece) for every piece the rows touch."""
    out = []
    for p in pieces:
        n = sum(1 for r in rows if p.start <= r <= p.end)
        if n:
            out.append((n, p))
    return out


def is_test_symbol(symbol: str, language: str) -> bool:
    """A test inside a source file: Rust's `mod tests`, Go's Test/Benchmark/Fuzz/Example
    functions, Python's test_ functions and methods. Only those: elsewhere `TestContext`,
    `BenchmarkRunner` or Python's `TestClient` is the project's own code."""
    parts = symbol.split(".") if symbol else []
    if not parts:
        return False
    if language == "rust":
        return any(p in ("tests", "test") for p in parts[:-1])
    if language == "go":
        return re.match(r"(Test|Benchmark|Fuzz|Example)[A-Z_]", parts[-1]) is not None
    if language == "python":
        return parts[-1].startswith("test_")
    return False


def is_header(piece: Piece) -> bool:
    """A file's opening chunk without a symbol: its imports, licence header, includes."""
    return piece.start == 1 and not piece.symbol


def pick_positives(hits: list[tuple[int, Piece]], limit: int = MAX_POSITIVES) -> list[Piece]:
    """Named definitions before unnamed code (a large file's windows, top-level statements),
    then the most changed lines; one per text. A file's header (imports) counts only when
    nothing else changed, and then the commit is skipped by the caller: an import is not what
    a description points at."""
    hits = [h for h in hits if not is_header(h[1]) and not is_test_symbol(h[1].symbol, h[1].language)]
    ranked = sorted(hits, key=lambda h: (not (h[1].symbol and h[1].kind in _DEFINITIONS), -h[0], h[1].path, h[1].start))
    out: list[Piece] = []
    for _, p in ranked:
        if all(p.text != q.text for q in out):
            out.append(p)
        if len(out) >= limit:
            break
    return out


def bm25_rank(query: str, docs: list[Piece], k1: float = 1.2, b: float = 0.75) -> list[tuple[float, Piece]]:
    """BM25 of the query over `docs` (idf from `docs`), best first, scores > 0 only."""
    if not docs:
        return []
    q = set(tokenize(query))
    n = len(docs)
    avg = sum(sum(d.terms.values()) for d in docs) / n or 1.0
    df = Counter(t for d in docs for t in q if t in d.terms)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in df}
    scored = []
    for d in docs:
        length = sum(d.terms.values())
        s = 0.0
        for t, w in idf.items():
            tf = d.terms.get(t, 0)
            if tf:
                s += w * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))
        if s > 0:
            scored.append((s, d))
    scored.sort(key=lambda x: (-x[0], x[1].path, x[1].start))
    return scored


def jaccard(a: Counter[str], b: Counter[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / (len(sa | sb) or 1)


# ------------------------------------------------------------------ exclusions


class Excluded(RuntimeError):
    """A repository (or a package inside one) that may not be trained on."""


def repo_names(github: str, packages: list[str] | tuple[str, ...] = ()) -> set[str]:
    """Every name a repository is known by: owner, name (a `.js`/`.go`/`.net` suffix dropped too),
    their aliases as build_data.py computes them, and the packages it publishes."""
    owner, name = github.split("/")
    out: set[str] = set()
    for part in (owner, name, re.sub(r"[.-](js|go|rs|py|net|php|rb|kt|java)$", "", name, flags=re.I), *packages):
        out |= fetch.aliases(part)
    return out


def check_repo(names: set[str], blocklist: set[str], evaluated: set[str], label: str) -> None:
    for alias in sorted(names):
        if fetch.name_hash(alias) in blocklist:
            raise Excluded(f"{label}: name {alias!r} is on the training blocklist")
        if fetch.normalise(alias) in evaluated:
            raise Excluded(f"{label}: name {alias!r} is an evaluated project")


def excluded_path(path: str, blocklist: set[str] | frozenset[str], evaluated: set[str] | frozenset[str]) -> str | None:
    """Why a file may not be used, or None: a folder on its path is a blocklisted project, or an
    evaluated one (names of 5+ characters: `cli11/`, `libyaml/`; short ones such as `url` or
    `chi` are ordinary folder names), e.g. a copy of CLI11 vendored in another project; or it
    lies in a monorepo package so named."""
    parts = path.split("/")[:-1]
    for part in parts:
        if fetch.name_hash(part) in blocklist:
            return f"folder {part!r} is on the training blocklist"
        if len(fetch.normalise(part)) >= 5 and fetch.normalise(part) in evaluated:
            return f"folder {part!r} is an evaluated project"
    pkg = package_folder(path)
    if pkg is not None:
        try:
            check_repo(fetch.aliases(pkg), blocklist, evaluated, pkg)
        except Excluded as exc:
            return f"package {exc}"
    return None


def package_folder(path: str) -> str | None:
    """The monorepo package a path belongs to (`packages/foo/src/x.ts` -> `foo`), or None."""
    parts = path.split("/")
    for i, part in enumerate(parts[:-2]):
        if part in _PACKAGE_PARENTS:
            return parts[i + 1]
    return None


def issue_repos(issues_dir: Path, issues_toml: Path | None) -> set[str]:
    """owner/name of every repository the issue task evaluates on: eval/issues.toml's and every
    `repo` of eval/issues/*.jsonl (questions may be written before the toml lists them)."""
    out: set[str] = set()
    if issues_toml is not None and issues_toml.is_file():
        for repo in tomllib.loads(issues_toml.read_text(encoding="utf-8")).get("repo", []):
            if repo.get("github"):
                out.add(repo["github"])
    for path in sorted(glob.glob(str(issues_dir / "*.jsonl"))):
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                repo = json.loads(line).get("repo")
                if repo:
                    out.add(repo)
    return out


def evaluated_names(
    eval_sources: list[Path],
    related: dict[str, list[str]],
    commits: Path,
    issues_dir: Path,
    issues_toml: Path | None,
    reserved: list[str],
) -> tuple[set[str], dict[str, list[str]]]:
    """Normalised names of every evaluated project (both tasks, both splits), and what came
    from where (for the manifest)."""
    doc = fetch.eval_names(eval_sources, related)
    com = fetch.commit_task_names(commits, "held-out") | fetch.commit_task_names(commits, "dev")
    repos = issue_repos(issues_dir, issues_toml) | set(reserved)
    iss = {fetch.normalise(a) for r in repos for part in r.split("/") for a in fetch.aliases(part)}
    return doc | com | iss, {"issue_and_reserved_repos": sorted(repos)}


# ------------------------------------------------------------------ licences

_LICENCE_FILES = re.compile(
    r"^(licen[cs]e|copying|unlicense|mit-licen[cs]e|licen[cs]e[-_.](mit|apache|bsd))([-_.]\w+)*$", re.I
)


def _words(text: str) -> re.Pattern[str]:
    """A licence phrase, whatever the line breaks and indentation between its words."""
    return re.compile(text.replace(" ", r"\s+"), re.I)


_LICENCE_TEXTS = [
    ("GPL", _words(r"GNU (AFFERO |LESSER |LIBRARY )?GENERAL PUBLIC LICEN[CS]E")),
    ("MPL", _words(r"Mozilla Public License")),
    ("EPL", _words(r"Eclipse Public License")),
    (
        "source-available",
        _words(
            r"(Business Source License|Server Side Public License|Elastic License|Commons Clause|Redis Source Available)"
        ),
    ),
    ("Apache-2.0", _words(r"Apache License,? Version 2\.0")),
    ("MIT", _words(r"Permission is hereby granted, free of charge, to any person")),
    ("BSD", _words(r"Redistribution and use in source and binary forms")),
    ("ISC", _words(r"Permission to use, copy, modify, and(/or)? distribute this software for any purpose")),
    ("Unlicense", _words(r"This is free and unencumbered software released into the public domain")),
    ("Zlib", _words(r"This software is provided 'as-is', without any express or implied")),
]
_NOT_PERMISSIVE = {"GPL", "MPL", "EPL", "source-available"}


def licence_of(files: dict[str, str]) -> tuple[str, str]:
    """(licence family, file) from a tree's top-level licence files: the permissive families
    found, joined with ' AND ' (Rust's LICENSE-MIT + LICENSE-APACHE: 'Apache-2.0 AND MIT'
    means both texts are present; the project offers either). A copyleft text anywhere wins,
    so that a dual 'X or GPL' project is refused as build_data.py refuses it."""
    found: set[str] = set()
    names = []
    for name, text in sorted(files.items()):
        if not _LICENCE_FILES.match(name):
            continue
        names.append(name)
        for family, pattern in _LICENCE_TEXTS:
            if pattern.search(text):
                found.add(family)
                if family in _NOT_PERMISSIVE:
                    break  # a copyleft file: the other texts in it are exceptions or notices
    bad = found & _NOT_PERMISSIVE
    if bad:
        return " AND ".join(sorted(bad)), ",".join(names)
    return " AND ".join(sorted(found)) or "unknown", ",".join(names)


def licence_agrees(declared: str, detected: str) -> bool:
    """The declared SPDX id (MIT, BSD-3-Clause, Apache-2.0, 'MIT OR Apache-2.0', ...) names a
    family the files show, and the files show nothing else non-permissive."""
    if detected == "unknown" or set(detected.split(" AND ")) & _NOT_PERMISSIVE:
        return False
    fams = set(detected.split(" AND "))
    want = {
        "BSD" if d.upper().startswith("BSD") or d.lower() == "curl" else ("MIT" if d.upper() in ("MIT", "X11") else d)
        for d in re.split(r"\s+(?:OR|AND)\s+", declared)
    }
    return bool(want & fams) or (declared.lower() == "curl" and bool(fams & {"ISC", "MIT"}))


# ------------------------------------------------------------------ git


class Git:
    """A bare mirror, read only: one `cat-file --batch` process for blobs."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._batch: subprocess.Popen[bytes] | None = None

    def run(self, *args: str) -> str:
        out = subprocess.run(
            ["git", f"--git-dir={self.git_dir}", "-c", "core.quotePath=false", *args],
            capture_output=True,
            check=True,
        )
        return out.stdout.decode("utf-8", "replace")

    def blob(self, sha: str) -> bytes | None:
        if self._batch is None:
            self._batch = subprocess.Popen(
                ["git", f"--git-dir={self.git_dir}", "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        assert self._batch.stdin is not None and self._batch.stdout is not None
        self._batch.stdin.write(sha.encode() + b"\n")
        self._batch.stdin.flush()
        header = self._batch.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            return None
        size = int(header[2])
        data = self._batch.stdout.read(size)
        self._batch.stdout.read(1)
        return data if header[1] == b"blob" else None

    def tree(self, commit: str, folder: str = "") -> dict[str, tuple[str, int]]:
        """path -> (blob sha, size) of the files directly in `folder` at `commit`."""
        spec = f"{commit}:{folder}" if folder else f"{commit}:"
        out: dict[str, tuple[str, int]] = {}
        try:
            listing = self.run("ls-tree", "-l", spec)
        except subprocess.CalledProcessError:
            return out
        for line in listing.splitlines():
            meta, _, name = line.partition("\t")
            parts = meta.split()
            if len(parts) == 4 and parts[1] == "blob" and parts[3].isdigit():
                out[f"{folder}/{name}" if folder else name] = (parts[2], int(parts[3]))
        return out

    def close(self) -> None:
        if self._batch is not None:
            if self._batch.stdin is not None:
                self._batch.stdin.close()
            self._batch.wait()
            self._batch = None


class LicenceCheck:
    """The licence of a commit's tree (its top-level licence files), cached by those files'
    blobs: every mined commit's parent is checked, not only the head."""

    def __init__(self, git: Git, declared: str) -> None:
        self.git, self.declared = git, declared
        self.by_blobs: dict[tuple[tuple[str, str], ...], tuple[str, str]] = {}
        self.used: Counter[str] = Counter()

    def at(self, commit: str) -> tuple[str, str]:
        files = {
            p: sha for p, (sha, size) in self.git.tree(commit).items() if _LICENCE_FILES.match(p) and size < 200_000
        }
        key = tuple(sorted(files.items()))
        if key not in self.by_blobs:
            texts = {}
            for p, sha in files.items():
                data = self.git.blob(sha)
                texts[p] = data.decode("utf-8", "replace") if data else ""
            self.by_blobs[key] = licence_of(texts)
        return self.by_blobs[key]

    def agrees(self, commit: str) -> bool:
        family, names = self.at(commit)
        ok = licence_agrees(self.declared, family)
        if ok:
            self.used[f"{family} ({names})"] += 1
        return ok

    def seen(self) -> dict[str, int]:
        """Licence (files) -> commits checked with it."""
        return dict(self.used)


@dataclass
class CommitInfo:
    sha: str
    parents: list[str]
    author: str
    email: str
    date: str
    message: str
    changes: list[tuple[str, str, str]]  # (status, old blob, path)


def read_log(git: Git, head: str, limit: int) -> list[CommitInfo]:
    """The newest `limit` first-parent commits, newest first, with their raw changes against the
    first parent (a merge's too: -m --first-parent)."""
    sep = "\x1e\x1f"
    out = git.run(
        "log",
        "--first-parent",
        "-m",
        "--no-renames",
        "--raw",
        "--no-abbrev",
        f"--max-count={limit}",
        f"--format={sep}%H%x00%P%x00%an%x00%ae%x00%cs%x00%B%x00",
        head,
    )
    commits: list[CommitInfo] = []
    for block in out.split(sep)[1:]:
        fields = block.split("\x00", 6)
        if len(fields) < 7:
            continue
        sha, parents, author, email, date, message, raw = fields
        changes = []
        for line in raw.splitlines():
            if not line.startswith(":"):
                continue
            meta, _, path = line.partition("\t")
            parts = meta.split()
            if len(parts) >= 5 and not path.startswith('"'):
                changes.append((parts[4][0], parts[2], path))
        commits.append(CommitInfo(sha, parents.split(), author, email, date, message, changes))
    return commits


# ------------------------------------------------------------------ one repository


class PieceCache:
    """Chunks by blob sha: the same file version recurs across many commits."""

    def __init__(self, git: Git, size: int = 3000) -> None:
        self.git, self.size = git, size
        self.items: OrderedDict[tuple[str, str], list[Piece]] = OrderedDict()

    def get(self, path: str, sha: str) -> list[Piece]:
        key = (path, sha)
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        data = self.git.blob(sha)
        pieces: list[Piece] = []
        if data is not None and len(data) <= MAX_FILE_BYTES and b"\x00" not in data[:8000]:
            try:
                pieces = chunk_pieces(path, data.decode("utf-8"))
            except UnicodeDecodeError:
                pieces = []
        self.items[key] = pieces
        if len(self.items) > self.size:
            self.items.popitem(last=False)
        return pieces


@dataclass
class RepoJob:
    github: str
    language: str
    licence: str
    git_dir: str
    max_commits: int
    max_pairs: int
    max_files: int
    max_chunks: int
    seed: int
    blocklist: frozenset[str]
    evaluated: frozenset[str]
    packages: tuple[str, ...] = ()


def mine_commit(
    git: Git, cache: PieceCache, job: RepoJob, c: CommitInfo, stats: Counter[str], licences: LicenceCheck | None = None
) -> list[dict[str, Any]]:
    """The pairs of one commit (empty when it is skipped; `stats` says why)."""
    if not c.parents:
        stats["root commit"] += 1
        return []
    if is_bot(c.author, c.email):
        stats["bot"] += 1
        return []
    merge = len(c.parents) > 1
    query = clean_message(c.message, merge)
    if query is None:
        body = _MERGE_PR.sub("", c.message.strip(), count=1).split("\n", 1)[1:] if merge else []
        label = (
            "merge without body"
            if merge and not "".join(body).strip()
            else "message (release, format, bot-like, short)"
        )
        stats[label] += 1
        return []
    if not c.changes or len(c.changes) > job.max_files:
        stats["too many files" if c.changes else "no change"] += 1
        return []
    sources = [(s, old, p) for s, old, p in c.changes if is_source(p)]
    modified = [(old, p) for s, old, p in sources if s == "M"]
    if not modified:
        stats["no modified source (tests/docs/new files only)"] += 1
        return []
    for _, _, p in sources:
        why = excluded_path(p, job.blocklist, job.evaluated)
        if why is not None:
            stats[f"excluded path: {why}"] += 1
            return []
    parent = c.parents[0]
    if licences is not None and not licences.agrees(parent):
        stats["no permissive licence file at the parent"] += 1
        return []
    paths = sorted({p for _, _, p in sources})
    patch = git.run("diff-tree", "-p", "-U0", "-w", "--no-renames", "--no-color", parent, c.sha, "--", *paths)
    rows = changed_rows(patch)
    added = added_counts(patch)
    new_lines = sum(n for p, n in added.items() if any(s == "A" and q == p for s, _, q in sources))
    hits: list[tuple[int, Piece]] = []
    changed_lines = 0
    for old, p in modified:
        r = rows.get(p, set())
        changed_lines += len(r)
        if r:
            hits.extend(overlapping(cache.get(p, old), r))
    if not hits:
        stats["whitespace only or no chunk"] += 1
        return []
    if new_lines > 2 * max(changed_lines, 1) and new_lines > 20:
        stats["mostly new files"] += 1
        return []
    if len(hits) > job.max_chunks:
        stats["sweep"] += 1
        return []
    positives = pick_positives(hits)
    if not positives:
        stats["imports/header only"] += 1
        return []
    # Negatives: untouched chunks of the changed files and of their sibling source files.
    touched = {(p.path, p.start) for _, p in hits}
    candidates: list[Piece] = []
    seen_paths = set()
    for old, p in modified:
        seen_paths.add(p)
        candidates.extend(x for x in cache.get(p, old) if (x.path, x.start) not in touched)
    rng = random.Random(f"{job.seed}:{c.sha}")
    changed_paths = {p for _, _, p in c.changes}
    for folder in sorted({p.rsplit("/", 1)[0] if "/" in p else "" for _, p in modified}):
        siblings = [
            (path, sha)
            for path, (sha, size) in git.tree(parent, folder).items()
            if path not in changed_paths
            and size <= MAX_FILE_BYTES
            and is_source(path)
            and excluded_path(path, job.blocklist, job.evaluated) is None
        ]
        if len(siblings) > MAX_SIBLINGS:
            siblings = rng.sample(siblings, MAX_SIBLINGS)
        for path, sha in siblings:
            candidates.extend(cache.get(path, sha))
    pos_texts = {p.text for p in positives}
    named = [d for d in candidates if d.symbol and not is_header(d)]
    if len(named) >= NEGATIVES:  # definitions, not import blocks or licence headers
        candidates = named
    negatives: list[str] = []
    for _, d in bm25_rank(query, candidates):
        if d.text in pos_texts or d.text in negatives:
            continue
        if any(jaccard(d.terms, p.terms) >= 0.9 for p in positives):
            continue
        negatives.append(d.text)
        if len(negatives) >= NEGATIVES:
            break
    if len(negatives) < NEGATIVES:  # a query with few shared words: other untouched chunks
        pool = [d for d in candidates if d.text not in pos_texts and d.text not in negatives]
        rng.shuffle(pool)
        for d in pool:
            if any(jaccard(d.terms, p.terms) >= 0.9 for p in positives):
                continue
            negatives.append(d.text)
            if len(negatives) >= NEGATIVES:
                break
    if len(negatives) < 2:
        stats["fewer than 2 negatives"] += 1
        return []
    stats["kept"] += 1
    return [
        {
            "query": query,
            "code": p.text,
            "negatives": negatives,
            "repo": job.github,
            "package": job.github,
            "commit": c.sha,
            "parent": parent,
            "date": c.date,
            "language": p.language,
            "path": p.path,
            "symbol": p.symbol,
            "kind": p.kind,
            "files": sorted(changed_paths),
        }
        for p in positives
    ]


def mine_repo(job: RepoJob) -> dict[str, Any]:
    """Every pair of one repository (capped), its licence and commit range, or why not."""
    started = time.monotonic()
    git = Git(Path(job.git_dir))
    try:
        head = git.run("rev-parse", "HEAD").strip()
        commits = read_log(git, head, job.max_commits)
        if not commits:
            return {"github": job.github, "refused": "no commits in the mirror"}
        oldest = commits[-1].sha
        licences = LicenceCheck(git, job.licence)
        family, names = licences.at(head)
        if not licences.agrees(head):
            return {
                "github": job.github,
                "refused": f"licence at head {head[:12]}: {family} ({names or 'no licence file'}), declared {job.licence}",
            }
        cache = PieceCache(git)
        stats: Counter[str] = Counter()
        pairs: list[dict[str, Any]] = []
        seen: set[tuple[str, str]] = set()
        examined = 0
        newest_used = oldest_used = None
        for c in commits:
            if len(pairs) >= job.max_pairs:
                break
            examined += 1
            try:
                got = mine_commit(git, cache, job, c, stats, licences)
            except subprocess.CalledProcessError as exc:
                stats["git error"] += 1
                print(f"  [{job.github}] {c.sha[:10]}: {exc.stderr[-200:]!r}", file=sys.stderr)
                continue
            fresh = []
            for pair in got:
                key = (pair["query"].lower(), pair["code"])
                if key not in seen:
                    seen.add(key)
                    fresh.append(pair)
            if fresh:
                pairs.extend(fresh[: job.max_pairs - len(pairs)])
                newest_used = newest_used or c.sha
                oldest_used = c.sha
        return {
            "github": job.github,
            "language": job.language,
            "licence": job.licence,
            "licence_files": {"head": {"licence": family, "files": names}, "parents_of_mined_commits": licences.seen()},
            "head": head,
            "commits_read": len(commits),
            "commits_examined": examined,
            "range": {
                "newest": head,
                "oldest_examined": commits[examined - 1].sha if examined else None,
                "oldest_read": oldest,
                "newest_date": commits[0].date,
                "oldest_examined_date": commits[examined - 1].date if examined else None,
                "newest_with_pairs": newest_used,
                "oldest_with_pairs": oldest_used,
                "rev_range": f"{commits[examined - 1].sha}^..{head} (first parent)" if examined else None,
            },
            "skipped": dict(sorted(stats.items())),
            "pairs": pairs,
            "seconds": round(time.monotonic() - started, 1),
        }
    finally:
        git.close()


def _job_key(job: RepoJob) -> str:
    """What a cached result of mine_repo depends on (the mirror's head is checked on reuse)."""
    fields = (
        MINER_VERSION,
        job.github,
        job.licence,
        job.max_commits,
        job.max_pairs,
        job.max_files,
        job.max_chunks,
        job.seed,
    )
    names = hashlib.sha256("\n".join(sorted(job.blocklist | job.evaluated)).encode()).hexdigest()
    return hashlib.sha256(repr((fields, names)).encode()).hexdigest()[:20]


def _mine_logged(job: RepoJob, work: Path | None = None) -> dict[str, Any]:
    """mine_repo, with its result kept in `work` so a stopped build resumes where it was."""
    cached = work / f"{job.github.replace('/', '+')}.json" if work is not None else None
    key = _job_key(job)
    if cached is not None and cached.is_file():
        result = json.loads(cached.read_text(encoding="utf-8"))
        head = Git(Path(job.git_dir)).run("rev-parse", "HEAD").strip()
        if result.get("key") == key and result.get("head", head) == head:
            print(f"  {job.github:<45} {len(result.get('pairs', [])):>4} pairs  (kept from {cached})", flush=True)
            return result
    try:
        result = mine_repo(job)
    except Exception as exc:  # one broken mirror loses one repository, not the build
        result = {"github": job.github, "refused": f"error: {type(exc).__name__}: {exc}"[:300]}
    result["key"] = key
    if cached is not None and not str(result.get("refused", "")).startswith("error:"):
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(result, ensure_ascii=False) + "\n", encoding="utf-8")
    n = len(result.get("pairs", []))
    print(f"  {job.github:<45} {n:>4} pairs  {result.get('seconds', 0):>6}s  {result.get('refused', '')}", flush=True)
    return result


# ------------------------------------------------------------------ validation split, summary


def validation_repos(
    repos: list[tuple[str, str, dict[str, int]]], share: float, seed: int, max_language_share: float = 0.3
) -> set[str]:
    """`share` of the repositories (at least one), by repository: (owner/name, main language,
    pairs per chunk language). Languages in a seeded order, one repository of each in turn
    (a seeded choice), only from languages with at least 3 repositories; a repository is not
    held back when that would put more than `max_language_share` of any chunk language's
    pairs into validation (TSX, say, where one repository holds most of them)."""
    want = max(1, round(len(repos) * share))
    rng = random.Random(f"{seed}:validation")
    totals: Counter[str] = Counter()
    for _, _, langs in repos:
        totals.update(langs)
    by_lang: dict[str, list[str]] = {}
    counts = {github: langs for github, _, langs in repos}
    for github, lang, _ in sorted(repos):
        by_lang.setdefault(lang, []).append(github)
    langs = sorted(lang for lang, rs in by_lang.items() if len(rs) >= 3)
    rng.shuffle(langs)
    out: set[str] = set()
    held: Counter[str] = Counter()
    tried: set[str] = set()
    while len(out) < want and langs:
        for lang in list(langs):
            left = [r for r in by_lang[lang] if r not in out and r not in tried]
            if len(left) < 1 or len([r for r in by_lang[lang] if r not in out]) <= 2:
                langs.remove(lang)
                continue
            pick = rng.choice(left)
            tried.add(pick)
            after = held + Counter(counts[pick])
            if any(after[k] > max_language_share * totals[k] for k in counts[pick]):
                continue
            out.add(pick)
            held = after
            if len(out) >= want:
                break
    return out


def summary(pairs: list[dict[str, Any]], label: str) -> str:
    lines = [f"{label}: {len(pairs)} pairs, {len({p['commit'] for p in pairs})} commits"]
    langs = Counter(p["language"] for p in pairs)
    lines.append("  per language: " + ", ".join(f"{k} {v}" for k, v in sorted(langs.items())))
    words = sorted(len(p["query"].split()) for p in pairs)
    if words:
        q = [words[min(len(words) - 1, int(len(words) * f))] for f in (0.1, 0.25, 0.5, 0.75, 0.9)]
        lines.append(
            f"  query words: min {words[0]}, p10 {q[0]}, p25 {q[1]}, median {q[2]}, p75 {q[3]}, p90 {q[4]}, max {words[-1]}"
        )
        chars = sorted(len(p["query"]) for p in pairs)
        lines.append(f"  query chars: median {chars[len(chars) // 2]}, p90 {chars[int(len(chars) * 0.9)]}")
        negs = Counter(len(p["negatives"]) for p in pairs)
        lines.append("  negatives per pair: " + ", ".join(f"{k}: {v}" for k, v in sorted(negs.items())))
    return "\n".join(lines)


# ------------------------------------------------------------------ main


def default_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ragls-train"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sources", type=Path, default=HERE / "commit_sources.toml")
    p.add_argument("--mirrors", type=Path, default=Path(os.environ.get("RAGLS_EVAL_MIRRORS", "/work/.mirror")))
    p.add_argument("--blocklist", type=Path, default=ROOT / "eval" / "training-blocklist.txt")
    p.add_argument("--eval-sources", type=Path, action="append", default=None)
    p.add_argument("--commits", type=Path, default=ROOT / "eval" / "commits.toml")
    p.add_argument("--issues", type=Path, default=ROOT / "eval" / "issues.toml")
    p.add_argument("--issues-dir", type=Path, default=ROOT / "eval" / "issues")
    p.add_argument("--doc-sources", type=Path, default=HERE / "sources.toml", help="for its [related] projects")
    p.add_argument("--manifest", type=Path, default=HERE / "commit-data-manifest.json")
    p.add_argument("--out", type=Path, default=default_cache() / "commit-pairs.jsonl")
    p.add_argument("--val-out", type=Path, default=None, help="default: beside --out, commit-pairs-val.jsonl")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--only", nargs="*", help="mine only these owner/name (a trial; the manifest is not written)")
    p.add_argument("--check-only", action="store_true", help="re-check the manifest's repositories, mine nothing")
    return p.parse_args(argv)


def _exclusions(args: argparse.Namespace, config: dict[str, Any]) -> tuple[set[str], set[str], dict[str, Any]]:
    blocklist = fetch.load_blocklist(args.blocklist)
    related = (
        tomllib.loads(args.doc_sources.read_text(encoding="utf-8")).get("related", {})
        if args.doc_sources.is_file()
        else {}
    )
    eval_sources = args.eval_sources or [ROOT / "eval" / "sources.toml"]
    evaluated, extra = evaluated_names(
        eval_sources, related, args.commits, args.issues_dir, args.issues, list(config.get("reserved", []))
    )
    checked = [
        *eval_sources,
        args.commits,
        args.issues,
        *sorted(Path(p) for p in glob.glob(str(args.issues_dir / "*.jsonl"))),
    ]
    info = {
        "blocklist": f"{args.blocklist.name}: {len(blocklist)} hashed names",
        "blocklist_sha256": hashlib.sha256(args.blocklist.read_bytes()).hexdigest(),
        "eval_files": [
            {
                "path": str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p),
                "sha256": hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None,
            }
            for p in checked
        ],
        **extra,
        "reserved": list(config.get("reserved", [])),
    }
    return blocklist, evaluated, info


def check_manifest(manifest: Path, blocklist: set[str], evaluated: set[str]) -> int:
    data = json.loads(manifest.read_text(encoding="utf-8"))
    bad = 0
    for entry in data["repositories"]:
        try:
            check_repo(repo_names(entry["github"], entry.get("packages", [])), blocklist, evaluated, entry["github"])
        except Excluded as exc:
            print(f"OVERLAP {exc}")
            bad += 1
    print(
        f"{len(data['repositories'])} mined repositories checked against {len(evaluated)} evaluated names: {bad} overlaps"
    )
    return 1 if bad else 0


def sha256_file(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    config = tomllib.loads(args.sources.read_text(encoding="utf-8"))
    blocklist, evaluated, excl_info = _exclusions(args, config)
    if args.check_only:
        return check_manifest(args.manifest, blocklist, evaluated)
    repos = config["repo"]
    twice = [g for g, n in Counter(r["github"].lower() for r in repos).items() if n > 1]
    if twice:
        print(f"listed more than once in {args.sources.name}: {', '.join(twice)}", file=sys.stderr)
        return 2
    if args.only:
        repos = [r for r in repos if r["github"] in args.only]
    refused: list[dict[str, str]] = []
    jobs: list[RepoJob] = []
    for r in repos:
        github = r["github"]
        try:
            check_repo(repo_names(github, r.get("packages", [])), blocklist, evaluated, github)
        except Excluded as exc:
            refused.append({"github": github, "reason": str(exc)})
            print(f"REFUSED {exc}", flush=True)
            continue
        git_dir = args.mirrors / github.replace("/", "+") / "repo"
        if not (git_dir / "HEAD").is_file():
            refused.append({"github": github, "reason": f"no mirror at {git_dir}"})
            print(f"MISSING {github}: no mirror at {git_dir}", flush=True)
            continue
        jobs.append(
            RepoJob(
                github=github,
                language=r["language"],
                licence=r["licence"],
                git_dir=str(git_dir),
                max_commits=int(r.get("max_commits", config["max_commits"])),
                max_pairs=int(r.get("max_pairs", config["max_pairs_per_repo"])),
                max_files=int(config["max_files"]),
                max_chunks=int(config["max_chunks"]),
                seed=int(config["seed"]),
                blocklist=frozenset(blocklist),
                evaluated=frozenset(evaluated),
                packages=tuple(r.get("packages", [])),
            )
        )
    print(f"mining {len(jobs)} repositories ({len(refused)} refused) with {args.jobs} processes", flush=True)
    work = None if args.only else args.out.parent / "commit-mining"
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(_mine_logged, jobs, [work] * len(jobs)))
    used = [res for res in results if "refused" not in res and res["pairs"]]
    for res in results:
        if "refused" in res:
            refused.append({"github": res["github"], "reason": res["refused"]})
        elif not res["pairs"]:
            refused.append({"github": res["github"], "reason": "no pairs"})
    if args.only:
        for res in used:
            print(summary(res["pairs"], res["github"]))
        trial = args.out.with_name("commit-pairs-trial.jsonl")
        with trial.open("w", encoding="utf-8") as handle:
            for res in used:
                for pair in res["pairs"]:
                    handle.write(json.dumps(pair, ensure_ascii=False, sort_keys=True) + "\n")
        print(f"trial pairs -> {trial}; skipped: {[res.get('skipped') for res in results]}")
        return 0

    val = validation_repos(
        [(res["github"], res["language"], dict(Counter(p["language"] for p in res["pairs"]))) for res in used],
        float(config["validation_share"]),
        int(config["seed"]),
    )
    val_out = args.val_out or args.out.with_name("commit-pairs-val.jsonl")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    order = {r["github"]: i for i, r in enumerate(config["repo"])}
    used.sort(key=lambda res: order[res["github"]])
    train_pairs = [p for res in used if res["github"] not in val for p in res["pairs"]]
    val_pairs = [p for res in used if res["github"] in val for p in res["pairs"]]
    for path, pairs in ((args.out, train_pairs), (val_out, val_pairs)):
        with path.open("w", encoding="utf-8") as handle:
            for pair in pairs:
                handle.write(json.dumps(pair, ensure_ascii=False, sort_keys=True) + "\n")
    # train.py's --negatives file (one mined negative per question, keyed as mine_negatives.py
    # keys it): the best-ranked of each pair's negatives.
    neg_out = args.out.with_name("commit-negatives.jsonl")
    with neg_out.open("w", encoding="utf-8") as handle:
        for pair in train_pairs:
            row = {"key": pair_key(pair["query"], pair["code"]), "negative": pair["negatives"][0]}
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    declared = {r["github"]: r for r in config["repo"]}
    entries = []
    for res in used:
        langs = Counter(p["language"] for p in res["pairs"])
        entries.append(
            {
                "github": res["github"],
                "language": res["language"],
                "licence": res["licence"],
                "licence_files": res["licence_files"],
                "packages": declared[res["github"]].get("packages", []),
                "split": "validation" if res["github"] in val else "train",
                "head": res["head"],
                "range": res["range"],
                "commits_read": res["commits_read"],
                "commits_examined": res["commits_examined"],
                "commits_with_pairs": len({p["commit"] for p in res["pairs"]}),
                "pairs": len(res["pairs"]),
                "languages": dict(sorted(langs.items())),
                "skipped": res["skipped"],
            }
        )
    manifest = {
        "seed": config["seed"],
        "settings": {
            k: config[k] for k in ("max_commits", "max_pairs_per_repo", "max_files", "max_chunks", "validation_share")
        },
        "positives_per_commit": MAX_POSITIVES,
        "negatives_per_pair": NEGATIVES,
        "outputs": {
            "train": {
                "file": args.out.name,
                "pairs": len(train_pairs),
                "sha256": sha256_file(args.out),
                "languages": dict(sorted(Counter(p["language"] for p in train_pairs).items())),
            },
            "negatives": {
                "file": neg_out.name,
                "rows": len(train_pairs),
                "sha256": sha256_file(neg_out),
                "what": "train.py --negatives: the first (best BM25) negative of each training pair",
            },
            "validation": {
                "file": val_out.name,
                "pairs": len(val_pairs),
                "sha256": sha256_file(val_out),
                "repositories": sorted(val),
                "languages": dict(sorted(Counter(p["language"] for p in val_pairs).items())),
            },
        },
        "repositories_used": len(entries),
        "excluded_by": excl_info,
        "repositories": entries,
        "refused": sorted(refused, key=lambda r: r["github"].lower()),
    }
    args.manifest.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(summary(train_pairs, f"train -> {args.out}"))
    print(summary(val_pairs, f"validation -> {val_out} ({', '.join(sorted(val))})"))
    print("per repository:")
    for e in entries:
        print(f"  {e['github']:<45} {e['language']:<11} {e['licence']:<22} {e['pairs']:>4}  {e['split']}")
    print(f"refused: {len(refused)}")
    for r in manifest["refused"]:
        print(f"  {r['github']}: {r['reason']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
