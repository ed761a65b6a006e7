"""The `<rag_context>` block: whole chunks, best first, within a character budget, then the
signatures of what the first hits call and are called by (query/graph_context.py) where the
budget has room left, with file content neutralised and names escaped (text/escaping.py) so no file
can close or fake a block."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragls.text.escaping import attr, neutralise

__all__ = ["CLOSE", "OPEN", "ContextChunk", "block", "format_context", "neutralise"]

OPEN = "<rag_context>\n"
CLOSE = "</rag_context>"


@dataclass(frozen=True)
class ContextChunk:
    path: str
    start_line: int  # 1-based inclusive
    end_line: int
    symbol: str | None
    content: str
    # A signature the code graph adds: "calls" or "called-by" the hit whose symbol is `of`.
    relation: str | None = None
    of: str | None = None


def block(c: ContextChunk) -> str:
    attrs = f'file="{attr(c.path)}" lines="{c.start_line}-{c.end_line}"'
    if c.symbol:
        attrs += f' symbol="{attr(c.symbol)}"'
    if c.relation:
        attrs += f' relation="{c.relation}" of="{attr(c.of or "")}"'
    body = neutralise(c.content)
    if not body.endswith("\n"):
        body += "\n"
    return f"<code_context {attrs}>\n{body}</code_context>\n"


def format_context(chunks: list[ContextChunk], max_chars: int, extra: Sequence[str] = ()) -> str:
    """Pack whole blocks in order until the budget is spent, then the `extra` blocks (already
    made: the graph's signatures) in the room left, so they never displace a chunk; "" if no
    chunk fits."""
    parts: list[str] = []
    used = len(OPEN) + len(CLOSE)
    for b in [block(c) for c in chunks]:
        if used + len(b) > max_chars:
            continue  # a smaller, lower-ranked chunk may still fit
        parts.append(b)
        used += len(b)
    if not parts:
        return ""
    for b in extra:
        if used + len(b) <= max_chars:
            parts.append(b)
            used += len(b)
    return OPEN + "".join(parts) + CLOSE
