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
    """Windows of at most `size` lines and `max_chars` characters (at least one line each),
    each starting `overlap` lines before the previous one ended. Linear in the text whatever
    the settings: a window is measured once, line by line, and a window the character budget
    cut short overlaps its predecessor by at most half its own length, so every step moves on
    by at least half a window (with 1,000-line windows, 500 lines of overlap and 200
    characters a chunk, the old re-measuring took 39 s on one 3,000-line file)."""
    out: list[Chunk] = []
    i = 0
    n = len(lines)
    size = max(1, size)
    while i < n:
        j = i + 1  # a window holds at least one line, however long
        used = len(lines[i]) + 1
        limit = min(n, i + size)
        while j < limit and used + len(lines[j]) + 1 <= max_chars:
            used += len(lines[j]) + 1
            j += 1
        end = j
        while end > i + 1 and not lines[end - 1].strip():
            end -= 1  # trailing blank lines belong to no one
        body = "\n".join(lines[i:end])
        if body.strip():
            out.append(Chunk(path, language, first_line + i, first_line + end - 1, kind, symbol, body))
        if j >= n:
            break
        i = max(i + 1, j - min(overlap, (j - i) // 2))
    return out
