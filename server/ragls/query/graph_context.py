"""Context that follows the code graph: the signatures (not the bodies) of what a `rag/retrieve`
answer's first hits call and are called by, as `<code_context>` blocks marked `relation`
("calls" or "called-by") and `of` (the hit's symbol), for the room the chunks leave in the
budget (context.format_context; docs/protocol.md). A step from hits to blocks: reading the graph
can fail or find nothing, and then the answer is the chunks alone."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

from ragls.escaping import attr
from ragls.graph.source import GraphSource
from ragls.query.context import ContextChunk, block
from ragls.query.retrieval import Hit

HITS = 3  # the first hits with a symbol whose neighbours are shown
PER_HIT = 3  # callees and callers each, per hit
# A block this module made, as found in an answer's context (a multi-root answer moves them).
RELATION_BLOCK = re.compile(
    r'<code_context file="([^"]*)"([^>\n]* relation="[^"]*"[^>\n]*)>\n(.*?)</code_context>\n', re.S
)


def neighbour_blocks(source: GraphSource, hits: Sequence[Hit]) -> list[str]:
    """The blocks, callees then callers per hit in rank order, none twice and none whose line is
    inside a hit (its code is in the answer already)."""
    out: list[ContextChunk] = []
    seen: set[tuple[str, int]] = set()
    try:
        with source.open() as graph:
            for hit in [h for h in hits if h.symbol][:HITS]:
                assert hit.symbol is not None
                callees, callers = graph.neighbours(hit.symbol, hit.path, PER_HIT)
                for relation, defs in (("calls", callees), ("called-by", callers)):
                    for d in defs:
                        inside = any(h.path == d.path and h.start_line <= d.line <= h.end_line for h in hits)
                        if inside or (d.path, d.line) in seen:
                            continue
                        seen.add((d.path, d.line))
                        out.append(ContextChunk(d.path, d.line, d.line, d.symbol, d.signature, relation, hit.symbol))
    except (LookupError, sqlite3.Error):
        return []
    return [block(c) for c in out]


def moved_blocks(context: str, folder: str, symbols: set[str]) -> list[str]:
    """A folder's graph blocks from its answer's context, their paths as `folder/path`, for the
    hits (`symbols`) that are still in the fused answer (answer.fuse)."""
    prefix = attr(folder)
    wanted = {f'of="{attr(s)}"' for s in symbols}
    return [
        f'<code_context file="{prefix}/{m[1]}"{m[2]}>\n{m[3]}</code_context>\n'
        for m in RELATION_BLOCK.finditer(context)
        if any(w in m[2] for w in wanted)
    ]
