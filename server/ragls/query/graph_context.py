"""Context that follows the code graph: the signatures (not the bodies) of what a `rag/retrieve`
answer's first hits call and are called by, as `<code_context>` blocks marked `relation`
("calls" or "called-by") and `of` (the hit's symbol), for the room the chunks leave in the
budget (context.format_context; docs/protocol.md). A step from hits to blocks: reading the graph
can fail or find nothing, and then the answer is the chunks alone."""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Sequence

from ragls.graph.source import GraphSource
from ragls.query.context import ContextChunk, block
from ragls.query.retrieval import Hit
from ragls.text.escaping import attr

HITS = 3  # the first hits with a symbol whose neighbours are shown
# The file paths the context's imports resolve against may be this old (GraphSource.open): while a
# large folder indexes, reading them again for every question doubled rag/retrieve's p95.
PATHS_STALE_S = 30.0
# What the signatures may add to an answer: hits past it show none (a common name's callers are
# many uses to resolve; the chunks are the answer, the signatures a bonus).
BUDGET_S = 0.015
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
    deadline = time.monotonic() + BUDGET_S
    try:
        with source.open(PATHS_STALE_S) as graph:
            for n, hit in enumerate([h for h in hits if h.symbol][:HITS]):
                if n and time.monotonic() > deadline:  # the first hit's always
                    break
                assert hit.symbol is not None
                callees, callers = graph.neighbours(hit.symbol, hit.path, PER_HIT, deadline)
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
