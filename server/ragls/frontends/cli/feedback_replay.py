"""`ragls feedback PATH` (list, `--clear`) and `ragls eval --feedback PATH`: every rated question
of a folder asked again of today's index with the settings it was asked with, and where the
locations marked relevant rank now compared with where they ranked in the rated answer."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field

from ragls.feedback import store
from ragls.feedback.records import (
    FeedbackRecord,
    Mark,
    StoredChunk,
    _Rec,
    best,
    locations,
    mrr,
    ranks_of,
    shown_chunks,
)
from ragls.text.escaping import label

if TYPE_CHECKING:
    from ragls.protocol import RetrieveResultOut
    from ragls.workspace.index import WorkspaceIndex


class Moved(_Rec):
    path: str
    line: int
    live: int | None  # its rank in the rated answer (None: not in it)
    now: int | None


class Case(_Rec):
    """One rated question replayed."""

    query: str
    rating: str
    method: str
    time: str
    comment: str | None = None
    redacted: bool = False
    relevant: list[Mark] = Field(default_factory=list)
    ranks: list[int | None] = Field(default_factory=list)  # of each mark now, 1-based (None: not found)
    rank: int | None = None  # the best of `ranks`
    live_ranks: list[int | None] = Field(default_factory=list)  # in the answer that was rated
    live_rank: int | None = None
    # Marked: a mark's rank moved (`moved` says which). Not marked: the ranked locations differ.
    changed: bool = False
    answer_changed: bool = False  # the ranked locations differ (path and lines, in order)
    moved: list[Moved] = Field(default_factory=list)
    top: list[str] = Field(default_factory=list)  # today's first locations, `path:start-end`
    warnings: list[str] = Field(default_factory=list)
    error: str | None = None


class Replay(_Rec):
    folder: str
    cases: list[Case]
    mrr: float | None  # over the marked questions, today
    live_mrr: float | None  # the same questions as rated
    changed: int  # cases whose `changed` is true


def compare(record: FeedbackRecord, now: list[StoredChunk]) -> Case:
    """A rated answer against today's answer to the same question (pure)."""
    live = ranks_of(record.chunks, record.relevant)
    ranks = ranks_of(now, record.relevant)
    answer_changed = locations(now) != locations(record.chunks)
    moved = [
        Moved(path=m.path, line=m.line, live=a, now=b)
        for m, a, b in zip(record.relevant, live, ranks, strict=True)
        if a != b
    ]
    return Case(
        query=record.query,
        rating=record.rating,
        method=record.method,
        time=record.time,
        comment=record.comment,
        redacted=record.redacted,
        relevant=record.relevant,
        ranks=ranks,
        rank=best(ranks),
        live_ranks=live,
        live_rank=best(live),
        changed=bool(moved) if record.relevant else answer_changed,
        answer_changed=answer_changed,
        moved=moved,
        top=[f"{c.path}:{c.start_line}-{c.end_line}" for c in now[:5]],
    )


def summary(folder: Path, cases: list[Case]) -> Replay:
    marked = [c for c in cases if c.relevant and c.error is None]
    return Replay(
        folder=str(folder),
        cases=cases,
        mrr=mrr([c.rank for c in marked]),
        live_mrr=mrr([c.live_rank for c in marked]),
        changed=sum(1 for c in cases if c.changed),
    )


async def _ask(ws: WorkspaceIndex, r: FeedbackRecord) -> RetrieveResultOut:
    from ragls.protocol import RetrieveParams, SymbolParams

    s = r.settings
    if r.method == "rag/findSymbol":
        return await ws.find_symbol(SymbolParams(name=r.query, kind=s.kind, top_k=s.top_k, max_chars=0))
    p = RetrieveParams(query=r.query, top_k=s.top_k, max_chars=0, paths=s.paths, languages=s.languages, intent=s.intent)
    return await ws.retrieve(p)


async def replay(ws: WorkspaceIndex, records: list[FeedbackRecord]) -> list[Case]:
    """Each record asked again, in the retrieval mode it was asked in (a client layer, as an
    editor's setting would be), in the order stored."""
    from ragls.feedback.answers import model_of
    from ragls.sharing.api import InvalidParams

    f = ws.folders.indexed[0]
    base_layers = list(ws.layers)
    cases: list[Case | None] = [None] * len(records)
    for mode in dict.fromkeys(r.settings.mode for r in records):
        ws.layers = [*base_layers, ("ragls eval --feedback", {"retrieval": {"mode": mode}})]
        await ws.reload_settings()
        for i, r in enumerate(records):
            if r.settings.mode != mode:
                continue
            try:
                res = await _ask(ws, r)
            except (InvalidParams, ValueError) as exc:
                cases[i] = Case(query=r.query, rating=r.rating, method=r.method, time=r.time, error=str(exc))
                continue
            case = compare(r, shown_chunks(res))
            if res.error:
                case.error = res.error
            case.warnings = list(res.warnings)
            if r.index.model != model_of(f.settings):
                case.warnings.append(f"rated with the model {r.index.model}; the index now uses {model_of(f.settings)}")
            if r.redacted:
                case.warnings.append("the question held a secret line and was stored redacted: replayed as stored")
            cases[i] = case
    ws.layers = base_layers
    await ws.reload_settings()
    return [c for c in cases if c is not None]


# -- the commands -----------------------------------------------------------------------------


def _folder(arg: str) -> Path:
    """A folder as given (it need not exist any more to list or erase its ratings)."""
    return Path(arg).expanduser().resolve()


def cmd_feedback(a: argparse.Namespace) -> int:
    from ragls.frontends.cli.feedback_tuning import TunedInfo, cmd_tune, tuned_info

    if getattr(a, "tune", False):
        return cmd_tune(a)
    root = _folder(a.path)
    path = store.file_for(root)
    if a.clear:
        try:
            n = len(store.load(root))
            gone = store.clear(root)
            tuned_gone = store.clear_tuned(root)
        except (store.FeedbackStoreError, OSError) as exc:
            raise SystemExit(f"ragls: {label(str(exc))}") from exc
        if gone:
            print(f"erased {n} ratings of {label(str(root))} ({label(str(path))})")
        else:
            print(f"no ratings stored for {label(str(root))}")
        if tuned_gone:
            print(f"erased the tuned ranker ({label(str(store.tuned_file(root)))})")
        return 0
    try:
        records = store.load(root)
    except store.FeedbackStoreError as exc:
        raise SystemExit(f"ragls: {label(str(exc))}") from exc
    tuned = tuned_info(root)
    if a.json:
        out = {
            "folder": str(root),
            "file": str(path),
            "ratings": [r.model_dump(mode="json", by_alias=True) for r in records],
            # The tuned ranker's numbers, {"error": ...} when it cannot be read, null when none.
            "tuned": tuned.model_dump(mode="json", by_alias=True)
            if isinstance(tuned, TunedInfo)
            else ({"error": tuned} if tuned else None),
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    if isinstance(tuned, TunedInfo):
        print(
            f"tuned ranker ({label(str(store.tuned_file(root)))}, {tuned.time}): tuned on {tuned.tuned} of "
            f"{tuned.cases} marked questions; on the {tuned.held_back} held back MRR@10 {tuned.mrr:.3f} tuned, "
            f"{tuned.default_mrr:.3f} default"
        )
    elif tuned:
        print(f"tuned ranker: {label(tuned)}")
    else:
        print("no tuned ranker (ragls feedback --tune)")
    if not records:
        print(f"no ratings stored for {label(str(root))}")
        return 0
    print(f"{len(records)} ratings of {label(str(root))} ({label(str(path))}), oldest first:")
    for r in records:
        marks = f", {len(r.relevant)} marked" if r.relevant else ""
        note = f" ({label(r.comment)})" if r.comment else ""
        print(f"{r.time}  {r.rating:<4}  {label(r.query)}  [{len(r.chunks)} shown{marks}]{note}")
    return 0


def _rank(r: int | None) -> str:
    return "-" if r is None else str(r)


def _text(rep: Replay) -> str:
    lines = [f"{len(rep.cases)} rated questions of {label(rep.folder)} replayed against today's index:"]
    for i, c in enumerate(rep.cases, 1):
        if c.error:
            state = f"error: {label(c.error)}"
        elif c.relevant:
            state = f"rank {_rank(c.rank)} (was {_rank(c.live_rank)})" + (" CHANGED" if c.changed else "")
        else:
            state = "answer changed" if c.answer_changed else "answer unchanged"
        lines.append(f"{i:>3}. {c.rating:<4} {state}  {label(c.query)}")
        for m in c.moved:
            lines.append(f"       {label(m.path)}:{m.line}: rank {_rank(m.live)} -> {_rank(m.now)}")
    if rep.mrr is not None:
        lines.append(f"MRR {rep.mrr:.3f} (as rated {rep.live_mrr or 0.0:.3f})")
    lines.append(f"{rep.changed} of {len(rep.cases)} changed")
    return "\n".join(lines)


def cmd_eval_feedback(a: argparse.Namespace) -> int:
    from ragls.frontends.cli.workspace_open import open_workspace as _open
    from ragls.frontends.cli.workspace_open import rated_folder

    root, records = rated_folder(a.feedback)

    async def run() -> list[Case]:
        if not records:
            return []
        ws = await _open([root], a.quiet)
        try:
            return await replay(ws, records)
        finally:
            await asyncio.to_thread(ws.close)

    rep = summary(root, asyncio.run(run()))
    if not records:
        print(f"ragls: no ratings stored for {label(str(root))} (docs/feedback.md)", file=sys.stderr)
    if a.json:
        print(json.dumps(rep.model_dump(mode="json", by_alias=True), indent=2, ensure_ascii=False))
    else:
        print(_text(rep))
    return 0
