"""What a bug report says about places in the code: the files its traces and text name
(ragls.query.mentions)."""

from __future__ import annotations

from ragls.query.mentions import is_long, mentioned_files, path_mentions

REPORT = """Crash when sorting imports with a comment

Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/isort/main.py", line 1225, in main
    sort_imports(file_name, config=config)
  File "/home/u/src/isort/isort/core.py", line 88, in process
    raise ValueError("boom")
ValueError: boom

Also see `isort/parse.py` and `Config.line_length` (v1.2, e.g. the docs).
\tat com.fasterxml.jackson.core.json.ReaderBasedJsonParser.nextToken(ReaderBasedJsonParser.java:712)
thread 'main' panicked at 'index out of bounds', crates/core/search.rs:120:5
goroutine 1 [running]:
main.(*Model).Update(...)
\t/home/u/fzf/src/terminal.go:1234 +0x1d
"""

FILES = [
    "isort/main.py",
    "isort/core.py",
    "isort/parse.py",
    "isort/__init__.py",
    "tests/__init__.py",
    "src/main/java/com/fasterxml/jackson/core/json/ReaderBasedJsonParser.java",
    "crates/core/search.rs",
    "crates/cli/search.rs",
    "src/terminal.go",
    "src/main.go",
]


def test_paths_in_frames_and_prose_are_found_once_in_order() -> None:
    paths = [m.path for m in path_mentions(REPORT)]
    assert paths[:2] == ["/usr/lib/python3.11/site-packages/isort/main.py", "/home/u/src/isort/isort/core.py"]
    assert "com/fasterxml/jackson/core/json/ReaderBasedJsonParser.java" in paths  # from the JVM frame
    assert {"isort/parse.py", "crates/core/search.rs", "/home/u/fzf/src/terminal.go"} <= set(paths)
    assert not any(p.endswith(".json") or p == "v1.2" for p in paths)  # a package name, a version
    lines = {m.path: m.line for m in path_mentions(REPORT)}
    assert lines["crates/core/search.rs"] == 120 and lines["isort/parse.py"] is None


def test_mentions_match_the_index_files_by_their_longest_suffix() -> None:
    found = mentioned_files(REPORT, FILES)
    # The project's own frames first, the installed package's (site-packages) last.
    assert found[0] == "isort/core.py" and found[-1] == "isort/main.py"
    assert "crates/core/search.rs" in found and "crates/cli/search.rs" not in found  # the folder decides
    assert "src/terminal.go" in found
    assert "src/main/java/com/fasterxml/jackson/core/json/ReaderBasedJsonParser.java" in found


def test_vague_mentions_are_not_used() -> None:
    assert mentioned_files("it fails in __init__.py", FILES) == []  # a common name without a folder
    many = [f"pkg{i}/util.py" for i in range(5)]
    assert mentioned_files("see util.py", many) == []  # matches too many files
    assert mentioned_files("see pkg3/util.py", many) == ["pkg3/util.py"]
    assert mentioned_files("no paths here, just words.", FILES) == []


def test_long_queries() -> None:
    assert is_long(REPORT) and not is_long("where do we retry uploads?")
    assert is_long("Fix the retry\n\nUploads that fail\nare never sent again.\n")  # a title and a body
    assert is_long("word " * 100) and not is_long("Add a maxsize argument to the TTL cache")
