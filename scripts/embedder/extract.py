"""(doc summary, code chunk) pairs from one source file, for every language ragls chunks.

The code side is exactly what the indexer embeds: the file, with the doc comment of every
function removed (as `eval/` does for its questions), chunked by ragls's own chunker and
formatted by `Chunk.embedding_text()`. Leaving the doc in would teach the model to match a
question against its own words in the code.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(1, str(ROOT / "eval"))

from goldenbuild import docs  # noqa: E402
from goldenbuild.extract import is_test_path  # noqa: E402
from goldenbuild.strip import Edit, strip_lines  # noqa: E402
from ragls.chunking import chunk_file  # noqa: E402
from ragls.chunking.syntax import SPECS, _parser  # noqa: E402

# Comment openers that mark a doc comment, per language. Go, C, C++ and Ruby document with
# plain comments, and so do many JavaScript libraries (underscore, moment); Java, Kotlin, PHP,
# Rust and C# have a dedicated doc syntax, and a plain comment there is a note.
_DOC_OPENERS: dict[str, tuple[str, ...]] = {
    "javascript": ("/**", "//"),
    "typescript": ("/**", "//"),
    "tsx": ("/**", "//"),
    "java": ("/**",),
    "kotlin": ("/**",),
    "php": ("/**",),
    "rust": ("///", "/**"),
    "csharp": ("///", "/**"),
    "go": ("//", "/*"),
    "c": ("/*", "//"),
    "cpp": ("/*", "//"),
    "ruby": ("#",),
}
# Siblings that may sit between a doc comment and its definition.
_BETWEEN = {"attribute_item", "attribute", "attribute_list", "decorator", "annotation", "modifiers"}
_LEGAL = re.compile(r"copyright|licen[cs]e|spdx|all rights reserved", re.I)
_TAG_PREFIX = re.compile(r"^\s*[@\\](brief|summary|description|fn|short)\b\s*", re.I)
_NOT_PROSE = re.compile(r"^\s*(todo|fixme|xxx|hack|deprecated|nolint|eslint|noinspection|rubocop|@)", re.I)
# A "summary" that is only a file path (a bundler's banner comment: `src/hooks/useSpring.ts`).
_PATH_ONLY = re.compile(r"^[\w@.-]+(/[\w@.-]+)+/?$|^[\w@-]+\.(jsx?|mjs|cjs|tsx?|json|css|scss|vue|svelte)$")
_MAX_BYTES = 400_000


@dataclass(frozen=True)
class Pair:
    query: str
    code: str  # Chunk.embedding_text(), what the indexer embeds
    path: str
    symbol: str
    language: str
    kind: str


@dataclass
class _Doc:
    def_row: int  # 0-based row where the definition (with wrappers) starts
    first: int  # 1-based inclusive doc lines
    last: int
    replacement: tuple[str, ...]
    query: str | None
    name: str


def _comment_lines(text: str) -> list[str]:
    """Comment text without markers: //, ///, //!, #, /* */, /** */, leading *."""
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        line = re.sub(r"^(/\*+!?|///?!?|#+|\*+/?)", "", line)
        line = re.sub(r"\*+/$", "", line).strip()
        line = _TAG_PREFIX.sub("", line)
        out.append(line)
    return out


def doc_query(language: str, text: str, name: str) -> str | None:
    """The doc's summary as a question, or None when it is not prose."""
    if _LEGAL.search(text):
        return None
    if language == "go":
        return docs.go_query(text, name)
    lines = _comment_lines(text)
    if language == "csharp":
        joined = " ".join(lines)
        m = re.search(r"<summary>(.*?)</summary>", joined, re.S)
        lines = [m.group(1)] if m else lines
    summary = docs.first_paragraph(lines)
    if not summary or _NOT_PROSE.match(summary) or summary.count(";") > 1 or "{" in summary:
        return None
    if _PATH_ONLY.match(summary.strip().rstrip(".")):
        return None
    # A doc that opens with the function's own name ("foo returns ...") gives it away.
    words = summary.split(" ", 1)
    if len(words) == 2 and words[0].strip("`'()") in (name, f"{name}()"):
        summary = words[1][:1].upper() + words[1][1:]
    return docs.finish(summary)


def _rows(node: Any) -> tuple[int, int]:
    start, end = node.start_point[0], node.end_point[0]
    if node.end_point[1] == 0 and end > start:
        end -= 1
    return start, end


def _standalone(node: Any, lines: list[str]) -> bool:
    (sr, sc), (er, ec) = node.start_point, node.end_point
    if ec == 0 and er > sr:  # a line comment that owns its newline
        return not lines[sr].encode()[:sc].strip()
    return not lines[sr].encode()[:sc].strip() and not lines[er].encode()[ec:].strip()


def _name(node: Any) -> str:
    for field in ("name", "declarator"):
        n = node.child_by_field_name(field)
        while n is not None and n.child_by_field_name("declarator") is not None:
            n = n.child_by_field_name("declarator")
        if n is not None:
            return n.text.decode("utf-8", "replace").split("::")[-1].split("(")[0]
    return ""


def _is_function(node: Any, language: str) -> bool:
    spec = SPECS[language]
    if node.type in spec.functions:
        return node.type not in ("function_signature", "function_signature_item", "abstract_method_signature")
    if node.type in spec.var_functions:
        decls = [c for c in node.named_children if c.type == "variable_declarator"]
        if len(decls) == 1:
            value = decls[0].child_by_field_name("value")
            return value is not None and value.type in ("arrow_function", "function_expression", "function")
    return False


def _anchor(node: Any, language: str) -> Any:
    """The outermost wrapper (export, decorators, template) holding the definition."""
    spec = SPECS[language]
    while node.parent is not None and node.parent.type in spec.wrappers:
        node = node.parent
    return node


def _python_doc(node: Any, lines: list[str]) -> tuple[int, int, tuple[str, ...], str] | None:
    body = node.child_by_field_name("body")
    if body is None or not body.named_children:
        return None
    first = body.named_children[0]
    if first.type == "expression_statement" and first.named_children:
        if first.named_children[0].type != "string":
            return None
    elif first.type != "string":
        return None
    if first.start_point[0] <= node.start_point[0] or not _standalone(first, lines):
        return None
    raw = first.text.decode("utf-8", "replace")
    text = re.sub(r'^[rRuUbB]*("""|\'\'\'|"|\')', "", raw)
    text = re.sub(r'("""|\'\'\'|"|\')$', "", text)
    import inspect

    text = inspect.cleandoc(text)
    start, end = _rows(first)
    rest = [c for c in body.named_children[1:] if c.type != "comment"]
    replacement = () if rest else (lines[start][: first.start_point[1]] + "...",)
    return start + 1, end + 1, replacement, text


def _preceding_doc(anchor: Any, language: str, lines: list[str]) -> tuple[int, int, str] | None:
    """The run of comments directly above the anchor (attributes may sit between)."""
    openers = _DOC_OPENERS.get(language)
    if not openers:
        return None
    comments = SPECS[language].comments
    node = anchor.prev_sibling
    if node is None and anchor.parent is not None and anchor.parent.parent is not None:
        # Ruby puts a comment above a class body's first method before the body node.
        node = anchor.parent.prev_sibling
    below = _rows(anchor)[0]
    while node is not None and node.type in _BETWEEN:
        below = _rows(node)[0]
        node = node.prev_sibling
    run: list[Any] = []
    while node is not None and node.type in comments and _rows(node)[1] >= below - 1 and _standalone(node, lines):
        run.insert(0, node)
        below = _rows(node)[0]
        node = node.prev_sibling
    if not run:
        return None
    text = "\n".join(c.text.decode("utf-8", "replace") for c in run)
    if not text.lstrip().startswith(openers):
        return None
    if language == "rust" and not text.lstrip().startswith(("///", "/**")):
        return None
    return _rows(run[0])[0] + 1, _rows(run[-1])[1] + 1, text


def _docs(language: str, text: str) -> list[_Doc]:
    src = text.encode("utf-8", "surrogatepass")
    tree = _parser(language).parse(src)
    lines = text.split("\n")
    found: list[_Doc] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if not _is_function(node, language):
            continue
        anchor = _anchor(node, language)
        name = _name(node)
        if language == "python":
            doc = _python_doc(node, lines)
            if doc is None:
                continue
            first, last, replacement, body = doc
            found.append(_Doc(_rows(anchor)[0], first, last, replacement, docs.python_query(body), name))
        else:
            pre = _preceding_doc(anchor, language, lines)
            if pre is None:
                continue
            first, last, body = pre
            found.append(_Doc(_rows(anchor)[0], first, last, (), doc_query(language, body, name), name))
    return found


def file_pairs(rel: str, language: str, text: str) -> list[Pair]:
    """Pairs of one file: each documented function's summary and the chunk that holds it."""
    if len(text) > _MAX_BYTES or is_test_path(rel) or language not in SPECS:
        return []
    try:
        found = _docs(language, text)
    except (ValueError, RecursionError, LookupError):
        return []
    if not found:
        return []
    edits: dict[int, Edit] = {}
    for d in found:
        edits.setdefault(d.first, Edit(d.first, d.last, d.replacement))
    try:
        stripped = strip_lines(text, list(edits.values()))
    except ValueError:
        return []
    chunks = chunk_file(rel, language, stripped.text)
    pairs: list[Pair] = []
    for d in found:
        if d.query is None:
            continue
        # The definition line itself (not the removed doc) in the stripped copy.
        line = stripped.new_line[d.def_row + 1]
        holding = [c for c in chunks if c.start_line <= line <= c.end_line and c.kind in ("function", "method")]
        if not holding:
            holding = [c for c in chunks if c.start_line <= line <= c.end_line and c.kind != "declaration"]
        if not holding:
            continue
        chunk = min(holding, key=lambda c: (c.end_line - c.start_line, c.start_line))
        if len(chunk.text.strip()) < 40:
            continue
        pairs.append(Pair(d.query, chunk.embedding_text(), rel, chunk.symbol or d.name, language, chunk.kind))
    return pairs
