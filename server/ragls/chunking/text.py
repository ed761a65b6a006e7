"""Fallback chunking for plain text: fixed line windows with overlap."""

from __future__ import annotations

from ragls.chunking.model import Chunk


def window_chunks(
    path: str,
    language: str,
    lines: list[str],
    size: int,
    overlap: int,
    max_chars: int,
    first_line: int = 1,
    kind: str = "text",
    symbol: str | None = None,
) -> list[Chunk]:
    out: list[Chunk] = []
    i = 0
    n = len(lines)
    while i < n:
        j = min(n, i + size)
        # Long lines can blow the char budget before the line budget.
        while j > i + 1 and sum(len(x) + 1 for x in lines[i:j]) > max_chars:
            j -= 1
        end = j
        while end > i + 1 and not lines[end - 1].strip():
            end -= 1  # trailing blank lines belong to no one
        body = "\n".join(lines[i:end])
        if body.strip():
            out.append(Chunk(path, language, first_line + i, first_line + end - 1, kind, symbol, body))
        if j >= n:
            break
        i = max(i + 1, j - overlap)
    return out
