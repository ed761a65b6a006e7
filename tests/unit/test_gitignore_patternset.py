"""PatternSet (pathspec on the linear-time re2 backend) gives pathspec's own verdict for every path, and a hostile\npattern costs milliseconds."""

from __future__ import annotations

import itertools
import time

import pathspec
import pytest

from ragls.ingest.discovery import DEFAULT_EXCLUDES
from ragls.ingest.gitignore import MAX_PATTERN_CHARS, MAX_PATTERNS, InvalidPatterns, PatternSet, compile_spec
from ragls.ingest.secrets import SECRET_FILE_PATTERNS

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


def test_a_backtracking_pattern_costs_milliseconds() -> None:
    """`*a*a*...*c` against a long name of `a`s: seconds to minutes with Python's `re`."""
    hostile = "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*c"
    ours = PatternSet([hostile])
    t0 = time.perf_counter()
    for n in (40, 60, 200, 4000):
        assert ours.verdict("a" * n) is None
        assert ours.verdict("d/" + "a" * n + "c") is True
    assert time.perf_counter() - t0 < 0.5


def test_broken_and_oversized_patterns_are_dropped_not_fatal() -> None:
    lines = ["*.log", "x" * (MAX_PATTERN_CHARS + 1), "[z-a]", "*.tmp"]
    ours = PatternSet(lines)
    assert ours.matches("a.log") and ours.matches("b.tmp") and not ours.matches("x.py")
    lines = [f"f{i}.txt" for i in range(MAX_PATTERNS - 100)] + ["!f7.txt"] + [f"g{i}.txt" for i in range(200)]
    many = PatternSet(lines)
    assert many.matches("f0.txt") and many.matches("g98.txt")
    assert not many.matches("g150.txt")  # past the bound
    assert not many.matches("f7.txt")  # a later negation still wins across re2's automata


def test_strict_compilation_names_the_bad_glob() -> None:
    with pytest.raises(InvalidPatterns):
        compile_spec(["[z-a]"], strict=True)
