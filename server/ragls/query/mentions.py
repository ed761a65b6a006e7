"""What a long query (a bug report, an issue, a change description) says about places in the code,
as a developer reads it: the files its stack traces and text name, and whether it is long at all.

A bug report is a page of prose, logs, stack traces and code. The dense model reads only its
first 256 tokens and BM25 weighs every word of it alike; but a traceback frame or a path in the
text names the file to look at outright. These functions find those mentions (pure: text in,
names out) and match them to the index's files (`mentioned_files`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# Source file extensions whose mention in prose is taken for a file (not `e.g.` or `v1.2`).
_EXT = (
    r"py|pyi|pyx|rs|go|java|kt|kts|scala|groovy|js|jsx|mjs|cjs|ts|tsx|mts|cts|vue|svelte|rb|php|cs|fs|"
    r"c|cc|cpp|cxx|h|hh|hpp|hxx|m|mm|swift|dart|lua|ex|exs|erl|hs|ml|clj|sh|bash|zsh|ps1|sql|proto|"
    r"toml|ya?ml|json|ini|cfg|md|rst|txt|gradle|cmake|mk"
)
# A path-like token: optional folders, a file name with a known extension, an optional :line[:col].
_PATH = re.compile(
    rf"(?<![\w./\\-])((?:[A-Za-z]:|~)?[/\\]?(?:[\w@.+-]+[/\\])*[\w@+-][\w@.+-]*\.(?:{_EXT}))(?::(\d+)(?::\d+)?)?(?![\w])"
)
# Java/Kotlin/Scala frames: `at com.acme.io.Parser.read(Parser.java:42)`.
_JVM_FRAME = re.compile(r"\bat\s+((?:[\w$]+\.)+)([\w$<>]+)\(([\w$]+\.(?:java|kt|scala|groovy)):?(\d+)?\)")
# Python frames: `File "/x/site-packages/pkg/mod.py", line 12, in parse`.
_PY_FRAME = re.compile(r'File "([^"]+)", line (\d+), in ([\w<>.]+)')

# Frames inside the language's own runtime or a package manager's folders name no file of the
# project (their suffix could still match a vendored copy: they are kept, last).
_RUNTIME = re.compile(
    r"(^|/)(lib/python\d[\d.]*|site-packages|dist-packages|node_modules|internal/modules|"
    r"rustc/[0-9a-f]+|\.cargo/registry|go/src/runtime|jdk\.internal|java\.base)(/|$)"
)
# Very common file names that say little on their own.
_GENERIC_NAMES = frozenset(
    {"__init__.py", "__main__.py", "index.js", "index.ts", "mod.rs", "lib.rs", "main.rs", "main.go", "setup.py"}
)


@dataclass(frozen=True)
class Mention:
    path: str  # as written, `/` separated, without a leading `./`
    line: int | None
    in_runtime: bool


def _clean(path: str) -> str:
    p = path.replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    return p


def path_mentions(text: str) -> list[Mention]:
    """Paths and file names the text mentions, in order of first appearance, each once."""
    seen: dict[str, Mention] = {}

    def add(path: str, line: str | None) -> None:
        p = _clean(path)
        if p and p not in seen:
            seen[p] = Mention(p, int(line) if line else None, bool(_RUNTIME.search(p)))

    for m in _PY_FRAME.finditer(text):
        add(m.group(1), m.group(2))
    for m in _JVM_FRAME.finditer(text):
        package = m.group(1).rstrip(".").split(".")
        # `com.acme.io.Parser$Inner.read` -> `com/acme/io/Parser.java`: drop the class part(s).
        while package and package[-1][:1].isupper():
            package.pop()
        add("/".join([*package, m.group(3)]), m.group(4))
    for m in _PATH.finditer(text):
        path = m.group(1)
        if "/" not in path and "\\" not in path and path.count(".") >= 3:
            continue  # `com.acme.core.json`: a package name, not a file
        add(path, m.group(2))
    return list(seen.values())


def mentioned_files(text: str, files: Iterable[str], limit: int = 10) -> list[str]:
    """The index's files (workspace-relative) that the text's path mentions name, best first:
    a mention matches the files whose path ends with it (its last components), the longest
    such suffix winning; a bare, very common file name (`__init__.py`, `mod.rs`) counts only
    with a folder; a mention matching more than 3 files is too vague to use. Mentions inside a
    runtime or package folder come after the others."""
    mentions = path_mentions(text)
    if not mentions:
        return []
    by_name: dict[str, list[str]] = {}
    for f in files:
        by_name.setdefault(f.rsplit("/", 1)[-1], []).append(f)
    ranked: list[tuple[int, int, str]] = []  # (runtime last, order, file)
    for order, m in enumerate(mentions):
        parts = [p for p in m.path.split("/") if p not in ("", ".", "..")]
        if not parts:
            continue
        candidates = by_name.get(parts[-1], [])
        if not candidates:
            continue
        best, best_len = [], 0
        for f in candidates:
            fparts = f.split("/")
            n = 0
            while n < min(len(parts), len(fparts)) and parts[-1 - n] == fparts[-1 - n]:
                n += 1
            if n > best_len:
                best, best_len = [f], n
            elif n == best_len:
                best.append(f)
        if best_len == 1 and parts[-1] in _GENERIC_NAMES:
            continue
        if len(best) > 3:
            continue
        ranked.extend((int(m.in_runtime), order, f) for f in best)
    out: list[str] = []
    for _, _, f in sorted(ranked):
        if f not in out:
            out.append(f)
    return out[:limit]


def is_long(query: str) -> bool:
    """A report rather than a question: several lines, or long."""
    return query.count("\n") >= 3 or len(query) > 400
