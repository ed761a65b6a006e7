"""Markdown: one chunk per section, named by its heading path (`Guide > Install`)."""

from __future__ import annotations

import re

from ragls.chunking.model import Chunk
from ragls.chunking.text import window_chunks

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def markdown_chunks(path: str, text: str, max_chars: int, window: int, overlap: int) -> list[Chunk]:
    lines = text.split("\n")
    sections: list[tuple[int, int, list[str]]] = []  # (start, end) 0-based inclusive, heading path
    stack: list[tuple[int, str]] = []
    start = 0
    in_fence = False
    current: list[str] = []
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line)
        if m and i > start:
            sections.append((start, i - 1, current))
            start = i
        if m:
            level = len(m.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, m.group(2)))
            current = [h for _, h in stack]
    sections.append((start, len(lines) - 1, current))
    out: list[Chunk] = []
    for s, e, heads in sections:
        while e > s and not lines[e].strip():
            e -= 1  # trailing blank lines belong to no one
        body = "\n".join(lines[s : e + 1])
        if not body.strip():
            continue
        symbol = " > ".join(heads) or None
        if len(body) <= max_chars:
            out.append(Chunk(path, "markdown", s + 1, e + 1, "section", symbol, body))
        else:
            out.extend(
                window_chunks(
                    path,
                    "markdown",
                    lines[s : e + 1],
                    window,
                    overlap,
                    max_chars,
                    first_line=s + 1,
                    kind="section",
                    symbol=symbol,
                )
            )
    return out
