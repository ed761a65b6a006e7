"""What a file is by its path: a test, release history, a repository process file. Retrieval
demotes them (query.retrieval.demote) and the file-level boosts and the source BM25 leave tests
out; the evaluations draw their gold files with the same test rule."""

from __future__ import annotations

import re

# Tests, specs and fixtures: a question about behaviour wants the implementation, and tests
# restate the same names; a query that asks about tests keeps them at full rank. C and C++ unit
# tests sit next to the code (`build_test.cc`, `util_unittest.cc`), RSpec files anywhere
# (`*_spec.rb`).
_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|__mocks__|specs?|testing|testdata|fixtures?)/"
    r"|(^|/)test_[^/]*\.py$|_tests?\.(py|go|rs|rb|exs?)$|\.(test|spec)\.[cm]?[jt]sx?$"
    r"|(^|/)[^/]*(Test|Tests|Spec)\.(java|kt|cs|scala|swift|php)$|(^|/)conftest\.py$"
    r"|_(unit)?tests?\.(c|cc|cpp|cxx|h|hh|hpp)$|_spec\.rb$",
)
# Release history (CHANGELOG.md, CHANGES.rst, NEWS, release notes): it restates past changes in
# the words people describe changes with, so it out-ranks the code a change or question is
# about; a query about releases or history keeps it at full rank.
_HISTORY_PATH = re.compile(
    r"(^|/)(change_?log|changes|history|news|release[-_ ]?notes|releases)([-_.][\w.-]*)?\.(md|markdown|rst|txt|adoc)$"
    r"|(^|/)(change_?log|changes|history|news|release[-_ ]?notes)$",
    re.IGNORECASE,
)
# Repository process files (CI and issue templates, funding, security and contribution policies,
# licences): they share a project's vocabulary and answer almost no question about its code; a
# query about them keeps them at full rank.
_META_PATH = re.compile(
    r"(^|/)\.(github|gitlab|circleci|gitea|forgejo)/"
    r"|(^|/)(code_of_conduct|contributing|security|funding|support|governance|codeowners|maintainers|contributors"
    r"|authors|licen[cs]e|copying|notice|pull_request_template|issue_template)(-[\w.]+)?"
    r"(\.(md|markdown|mdx|rst|txt|adoc|yml|yaml))?$",
    re.IGNORECASE,
)


def is_test_path(path: str) -> bool:
    return _TEST_PATH.search(path) is not None


def is_history_path(path: str) -> bool:
    return _HISTORY_PATH.search(path) is not None


def is_meta_path(path: str) -> bool:
    return _META_PATH.search(path) is not None
