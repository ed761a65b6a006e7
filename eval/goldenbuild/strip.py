"""Remove doc lines from a file and map old line numbers to the stripped copy's."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise


@dataclass(frozen=True)
class Edit:
    start: int  # 1-based inclusive range of lines to remove
    end: int
    replacement: tuple[str, ...] = ()


@dataclass(frozen=True)
class Stripped:
    text: str
    # new_line[old] for every old line (1-based; index 0 unused). A removed line maps to the
    # line that took its place, so a range that starts or ends on one stays well-formed.
    new_line: list[int]

    def map_range(self, start: int, end: int) -> tuple[int, int]:
        return self.new_line[start], self.new_line[end]


def strip_lines(text: str, edits: list[Edit]) -> Stripped:
    """Apply non-overlapping edits; lines are the pieces between '\\n'."""
    lines = text.split("\n")
    ordered = sorted(set(edits), key=lambda e: e.start)
    for before, after in pairwise(ordered):
        if after.start <= before.end:
            raise ValueError(f"overlapping edits {before} and {after}")
    out: list[str] = []
    new_line = [0] * (len(lines) + 1)
    old = 1
    for edit in ordered:
        while old < edit.start:
            out.append(lines[old - 1])
            new_line[old] = len(out)
            old += 1
        out.extend(edit.replacement)
        # Removed lines point at the first replacement line or, with none, at the next kept
        # line (which is the next line appended to `out`).
        for removed in range(edit.start, edit.end + 1):
            new_line[removed] = len(out) - len(edit.replacement) + 1
        old = edit.end + 1
    while old <= len(lines):
        out.append(lines[old - 1])
        new_line[old] = len(out)
        old += 1
    return Stripped("\n".join(out), new_line)
