"""The repository map's text: each file's path, then the signatures of its chosen definitions
with their lines, indented by scope, within a token budget (tokens estimated as characters / 4,
the usual rate of code under the common tokenizers)."""

from __future__ import annotations

import math

from ragls.protocol import MapDefinition, MapFile
from ragls.text.escaping import label


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def header(f: MapFile, multi: bool) -> str:
    path = f"{f.folder}/{f.path}" if multi and f.folder else f.path
    return f"{label(path)}:\n"


def line(d: MapDefinition) -> str:
    depth = d.symbol.count(".")  # `Ring.push` sits one level inside `Ring`
    return f"{'  ' * (depth + 1)}{d.line}: {label(d.signature)}\n"


def render(files: list[MapFile], multi: bool = False) -> str:
    return "".join(header(f, multi) + "".join(line(d) for d in f.definitions) for f in files)


def fit(files: list[MapFile], max_tokens: int, multi: bool = False) -> list[MapFile]:
    """The files (in their order) and as many of each one's definitions (in theirs) as the budget
    holds; a file whose header no longer fits is left out."""
    out: list[MapFile] = []
    used = 0
    for f in files:
        cost = tokens(header(f, multi))
        if used + cost > max_tokens:
            continue
        used += cost
        kept: list[MapDefinition] = []
        for d in f.definitions:
            c = tokens(line(d))
            if used + c <= max_tokens:
                kept.append(d)
                used += c
        out.append(f.model_copy(update={"definitions": kept}))
    return out
