"""The `<rag_context>` block: whole chunks, best first, within a character budget, with
file content neutralised and names escaped (escaping.py) so no file can close or fake a block."""

from __future__ import annotations

from dataclasses import dataclass

from ragls.escaping import attr, neutralise

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


def block(c: ContextChunk) -> str:
    attrs = f'file="{attr(c.path)}" lines="{c.start_line}-{c.end_line}"'
    if c.symbol:
        attrs += f' symbol="{attr(c.symbol)}"'
    body = neutralise(c.content)
    if not body.endswith("\n"):
        body += "\n"
    return f"<code_context {attrs}>\n{body}</code_context>\n"


def format_context(chunks: list[ContextChunk], max_chars: int) -> str:
    """Pack whole blocks in order until the budget is spent; "" if none fits."""
    parts: list[str] = []
    used = len(OPEN) + len(CLOSE)
    for c in chunks:
        b = block(c)
        if used + len(b) > max_chars:
            continue  # a smaller, lower-ranked chunk may still fit
        parts.append(b)
        used += len(b)
    return OPEN + "".join(parts) + CLOSE if parts else ""
