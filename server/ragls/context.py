"""The `<rag_context>` block: whole chunks, best first, within a character budget, with
file content neutralised so it can never close or fake a block."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape

_TAG = re.compile(r"<(\s*/?\s*)(rag_context|code_context)", re.IGNORECASE)
_ZWSP = "\u200b"
OPEN = "<rag_context>\n"
CLOSE = "</rag_context>"


@dataclass(frozen=True)
class ContextChunk:
    path: str
    start_line: int  # 1-based inclusive
    end_line: int
    symbol: str | None
    content: str


def neutralise(text: str) -> str:
    """`</code_context>` in a file becomes `<\u200b/code_context>`: visible, but inert."""
    return _TAG.sub(lambda m: "<" + _ZWSP + m.group(1) + m.group(2), text)


def block(c: ContextChunk) -> str:
    attrs = f'file="{escape(c.path, quote=True)}" lines="{c.start_line}-{c.end_line}"'
    if c.symbol:
        attrs += f' symbol="{escape(c.symbol, quote=True)}"'
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
