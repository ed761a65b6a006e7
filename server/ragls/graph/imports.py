"""What an import statement names, language by language: the module as a lowercase path key
(`billing.invoice` -> `billing/invoice`; `./debounce` in `web/src/app.ts` -> `web/src/debounce`),
matched later against the workspace's file paths (resolve.py), and the names it imports.

Statements are untrusted text: every parser here is linear and bounded (no recursion, a cap on
tokens and nesting)."""

from __future__ import annotations

import posixpath
import re

_MAX_TEXT = 2_000  # characters of one statement read
_MAX_PATHS = 64  # paths of one statement kept
_MAX_DEPTH = 16  # nesting of Rust use groups followed

# Extensions an import may spell and a key leaves out: the key names a module, whichever file
# (`ring_buffer.h` and `ring_buffer.c` are one module of C).
_EXTENSIONS = re.compile(
    r"\.(?:py|pyi|js|jsx|mjs|cjs|ts|tsx|mts|cts|d\.ts|h|hh|hpp|hxx|c|cc|cpp|cxx|rb|php|java|kt|cs|go|rs)$", re.I
)
_SEPARATORS = {
    "python": ".",
    "java": ".",
    "kotlin": ".",
    "csharp": ".",
    "rust": "::",
    "php": "\\",
}
_RUST_ROOTS = frozenset({"crate", "self", "super"})


def _normal(path: str) -> str:
    path = posixpath.normpath(path) if path else ""
    while path.startswith("../"):
        path = path[3:]
    return "" if path in (".", "..", "/") else path.lstrip("/").lower()


def module_key(language: str, module: str, rel_dir: str, relative: bool = False) -> str:
    """The module of an import as a lowercase path key ("" when it names nothing usable)."""
    module = module.strip().strip("\"'`<>")
    if not module or len(module) > 500:
        return ""
    if language == "python" and module.startswith("."):
        level = len(module) - len(module.lstrip("."))
        base = rel_dir
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        rest = module[level:].replace(".", "/")
        return _normal(posixpath.join(base, rest) if rest else base)
    if relative or (language in ("javascript", "typescript", "tsx", "c", "cpp") and module.startswith(("./", "../"))):
        return _normal(_EXTENSIONS.sub("", posixpath.join(rel_dir, module)))
    sep = _SEPARATORS.get(language)
    if sep is not None:
        parts = [p for p in module.split(sep) if p and p != "*"]
        if language == "rust":
            while parts and parts[0] in _RUST_ROOTS:
                parts.pop(0)
        return _normal("/".join(parts))
    if language in ("javascript", "typescript", "tsx") and module.startswith(("@/", "~/")):
        module = module[2:]  # a bundler's alias for the source root
    return _normal(_EXTENSIONS.sub("", module))


def last_name(module: str, language: str) -> str | None:
    """The name a Java/Kotlin/Rust/PHP import brings in: its last segment (not `*`)."""
    sep = _SEPARATORS.get(language, ".")
    last = module.rstrip().rstrip(";").split(sep)[-1].strip()
    return last if last and last not in ("*", "self") and last.isidentifier() else None


_RUST_TOKEN = re.compile(r"[A-Za-z_]\w*|::|[{},*]")
_RUST_HEAD = re.compile(r"^\s*(?:pub(?:\s*\([^)]*\))?\s+)?use\s+")


def rust_use_paths(text: str) -> list[str]:
    """`use a::b::{c, d::e as f, *};` -> ["a::b::c", "a::b::d::e", "a::b::*"]: every leaf of
    a use tree, by a flat scan (groups nest without recursion)."""
    text = _RUST_HEAD.sub("", text[:_MAX_TEXT], count=1)
    out: list[str] = []
    prefixes = [""]
    current = ""
    alias = False

    def emit() -> None:
        if current and not current.endswith("::") and len(out) < _MAX_PATHS:
            out.append(prefixes[-1] + current)

    for token in _RUST_TOKEN.findall(text):
        if alias:  # the name after `as` is local
            alias = False
            continue
        if token == "as":
            alias = True
        elif token == "{":
            if len(prefixes) > _MAX_DEPTH:
                break
            prefixes.append(prefixes[-1] + current)
            current = ""
        elif token in (",", "}"):
            emit()
            current = ""
            if token == "}" and len(prefixes) > 1:
                prefixes.pop()
        else:
            current += token
    emit()
    return out


_PHP_HEAD = re.compile(r"^\s*use\s+(?:function\s+|const\s+)?", re.I)
_PHP_AS = re.compile(r"\s+as\s+\w+\s*$", re.I)


def php_use_paths(text: str) -> list[str]:
    """`use A\\B\\{C, D as E};` and `use A\\B, C\\D as E;` -> ["A\\B\\C", "A\\B\\D"] ..."""
    text = _PHP_HEAD.sub("", text[:_MAX_TEXT], count=1).strip().rstrip(";").strip()
    prefix = ""
    if "{" in text:
        prefix, _, text = text.partition("{")
        text = text.rstrip().rstrip("}")
    out: list[str] = []
    for item in text.split(","):
        item = _PHP_AS.sub("", _PHP_HEAD.sub("", item)).strip().strip("\\")
        if item and len(out) < _MAX_PATHS:
            out.append(prefix.strip() + item if prefix else item)
    return out
