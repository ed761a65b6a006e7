"""PatternSet (one joined regex as a pre-check) gives pathspec's own verdict for every path."""

from __future__ import annotations

import itertools

import pathspec

from ragls.gitignore import PatternSet
from ragls.secrets import SECRET_FILE_PATTERNS
from ragls.workspace import DEFAULT_EXCLUDES

_LINES = [
    *DEFAULT_EXCLUDES,
    "*.log",
    "!keep.log",
    "build/",
    "!build/keep/",
    "/top-only.txt",
    "docs/**/*.tmp",
    r"\#literal",
    "a?c",
    "[xy]z.py",
]
_NAMES = ["a.py", "keep.log", "x.log", "top-only.txt", "#literal", "abc", "yz.py", ".env", "id_rsa", "m.min.js", "b"]
_DIRS = [
    "",
    "src/",
    "build/",
    "build/keep/",
    "node_modules/",
    "docs/a/",
    "pkg/.git/",
    "deep/x/y/",
    "src/node_modules/pkg/",
    "x/build/keep/y/",
    "a/docs/b/c/",
]


def _paths() -> list[str]:
    files = [d + n for d, n in itertools.product(_DIRS, _NAMES)]
    return files + [d for d in _DIRS if d] + [d.rstrip("/") for d in _DIRS if d]


def test_verdicts_match_pathspec_for_files_dirs_and_negations() -> None:
    for lines in (_LINES, SECRET_FILE_PATTERNS, [], ["!only-a-negation"]):
        ours, theirs = PatternSet(lines), pathspec.GitIgnoreSpec.from_lines(lines)
        for p in _paths():
            assert ours.verdict(p) == theirs.check_file(p).include, (lines[:3], p)
            assert ours.matches(p) == theirs.match_file(p), p


def test_the_pre_check_answers_most_paths_without_the_spec() -> None:
    ours = PatternSet(_LINES)
    hit = [p for p in _paths() if ours.verdict(p) is not None]
    assert hit and len(hit) < len(_paths())  # some match a pattern, the rest are answered by one search
