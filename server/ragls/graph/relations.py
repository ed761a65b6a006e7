"""One index's answers about the code graph: the uses of a definition (`references`, and
`references_of` for scripts) and a definition's or a file's neighbours (`related`), read from
the graph's rows on demand and resolved by resolve.py. Every answer is bounded: at most
MAX_SCAN uses are read, each list is cut to the caller's limit, and the cut is said in
`warnings`."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ragls.graph.model import CALL, IMPORT
from ragls.graph.read import Definition, Enclosing, GraphReader, Use
from ragls.graph.resolve import PathIndex, Resolver
from ragls.protocol import Location, ReferencesResult, Related, RelatedResult

if TYPE_CHECKING:
    pass

MAX_SCAN = 20_000  # uses of the names asked about read per question
NEIGHBOUR_SCAN = 200  # uses of a hit's name read for its callers in the context (`neighbours`)
NEIGHBOUR_STEP = 25  # of them resolved at a time
_SEPARATORS = re.compile(r"::|#|->|\\")


def split_symbol(symbol: str) -> tuple[str, str]:
    """`billing.Invoice.total` / `Invoice::total` / `Invoice#total()` -> ("total", "billing.Invoice")."""
    dotted = _SEPARATORS.sub(".", symbol.strip()).removesuffix("()").strip(".")
    scope, _, name = dotted.rpartition(".")
    return name, scope


def matching(candidates: list[Definition], scope: str) -> list[Definition]:
    """The definitions whose scope ends with `scope` at a dot (case-insensitive), all when unset."""
    if not scope:
        return candidates
    want = scope.lower()
    return [d for d in candidates if d.scope.lower() == want or d.scope.lower().endswith("." + want)]


class Graph:
    """One index's graph for the length of a question: its reader, the paths of its files (for
    imports) and a resolver."""

    def __init__(self, reader: GraphReader, paths: PathIndex) -> None:
        self.reader = reader
        self.resolver = Resolver(reader, paths)

    # -- shared steps -------------------------------------------------------------------------
    def targets(self, symbol: str, path: str | None) -> tuple[str, list[Definition]]:
        """The name, and the definitions of `symbol` ranked as seen from `path`."""
        name, scope = split_symbol(symbol)
        found = matching(self.reader.definitions(name), scope)
        return name, [r.definition for r in self.resolver.rank(found, path)]

    def resolving(self, uses: list[Use], candidates: list[Definition], wanted: set[Definition]) -> list[Use]:
        """The uses whose resolution includes one of `wanted`."""
        self.resolver.load(u.path for u in uses)
        by_name: dict[str, list[Definition]] = {}
        for d in candidates:
            by_name.setdefault(d.name, []).append(d)
        return [
            u for u in uses if wanted.intersection(self.resolver.best(by_name.get(u.name, []), u.path, u.qualifier))
        ]

    def holders(self, uses: Iterable[Use]) -> dict[str, Enclosing]:
        return {p: Enclosing(defs) for p, defs in self.reader.definitions_in({u.path for u in uses}).items()}

    @staticmethod
    def holder(holders: dict[str, Enclosing], u: Use) -> str | None:
        e = holders.get(u.path)
        d = e.at(u.line) if e is not None else None
        return d.symbol if d is not None else None

    # -- references ---------------------------------------------------------------------------
    def references(self, symbol: str, path: str | None, limit: int) -> ReferencesResult:
        name, ranked = self.targets(symbol, path)
        warnings: list[str] = []
        uses = self.reader.uses([name], MAX_SCAN)
        if len(uses) >= MAX_SCAN:
            warnings.append(f"more than {MAX_SCAN} uses of {name!r}: only the first {MAX_SCAN} were resolved")
        if not ranked:
            if path is not None and self.reader.has_file(path):
                warnings.append(f"{path} defines no {symbol!r}")
                uses = []
            else:
                warnings.append(f"{symbol!r} is not defined in the index: its uses are matched by name alone")
        else:
            # With `path`, the definition in (or as seen from) that file; without, every
            # definition of the name: a use counts when it resolves to one of them.
            wanted = {ranked[0]} if path is not None else set(ranked)
            uses = self.resolving(uses, self.reader.definitions(name), wanted)
        if len(uses) > limit:
            warnings.append(f"{len(uses)} uses of {name!r}: the first {limit} (raise limit, or give path)")
        uses = sorted(uses, key=lambda u: (u.path, u.line))[:limit]
        holders = self.holders(uses)
        locations = [
            Location(path=u.path, line=u.line, symbol=self.holder(holders, u), kind=u.kind)  # type: ignore[arg-type]
            for u in uses
        ]
        return ReferencesResult(locations=locations, warnings=warnings)

    # -- neighbours (the context's signatures) ------------------------------------------------
    def neighbours(
        self, symbol: str, path: str, limit: int, deadline: float = float("inf")
    ) -> tuple[list[Definition], list[Definition]]:
        """The definitions that the definition `symbol` of `path` calls, and those that call it,
        resolved as `related` resolves them, at most `limit` each (callees in the order of their
        calls, callers by path); ([], []) when `path` defines no such symbol. Reads at most
        NEIGHBOUR_SCAN uses of the name and resolves them a few files at a time, until `limit`
        callers are found or `time.monotonic()` passes `deadline`: a retrieval answer asks this
        of its first hits, and a common name (`new`, `get`) has uses everywhere."""
        _, ranked = self.targets(symbol, path)
        target = next((d for d in ranked if d.path == path), None)
        if target is None:
            return [], []
        seen = {(target.path, target.line)}
        callees: list[Definition] = []
        calls = [u for u in self.reader.uses_in(path, target.line, target.end_line) if u.kind == CALL]
        by_name: dict[str, list[Definition]] = {}
        for d in self.reader.definitions_named({u.name for u in calls}):
            by_name.setdefault(d.name, []).append(d)
        for u in calls:
            found = self.resolver.best(by_name.get(u.name, []), path, u.qualifier)
            if len(found) == 1 and (found[0].path, found[0].line) not in seen:  # an ambiguous call shows nothing
                seen.add((found[0].path, found[0].line))
                callees.append(found[0])
                if len(callees) == limit:
                    break
        callers: list[Definition] = []
        uses = sorted(
            (u for u in self.reader.uses([target.name], NEIGHBOUR_SCAN) if u.kind == CALL),
            key=lambda u: (u.path, u.line),
        )
        candidates = self.reader.definitions(target.name)
        for k in range(0, len(uses), NEIGHBOUR_STEP):
            if len(callers) == limit or (k and time.monotonic() > deadline):  # the first step always
                break
            part = self.resolving(uses[k : k + NEIGHBOUR_STEP], candidates, {target})
            holders = self.holders(part)
            for u in part:
                e = holders.get(u.path)
                d = e.at(u.line) if e is not None else None
                if d is not None and (d.path, d.line) not in seen:
                    seen.add((d.path, d.line))
                    callers.append(d)
                    if len(callers) == limit:
                        break
        return callees, callers

    # -- related ------------------------------------------------------------------------------
    def related(self, symbol: str | None, path: str | None, limit: int) -> RelatedResult:
        out = RelatedResult(definition=[], callers=[], callees=[], imports=[], imported_by=[])
        if path is not None and not self.reader.has_file(path):
            out.warnings.append(f"{path} is not in the code graph (not indexed, or no code)")
            if symbol is None:
                return out
            path = None
        if symbol is not None:
            name, ranked = self.targets(symbol, path)
            out.definition = [Related(symbol=d.symbol, path=d.path, line=d.line) for d in ranked[:limit]]
            if len(ranked) > 1:
                out.warnings.append(f"{symbol!r} has {len(ranked)} definitions; the relations are the first one's")
            if not ranked:
                out.warnings.append(f"{symbol!r} is not defined in the index: callers are uses of the name")
                self._callers(out, self.reader.uses([name], MAX_SCAN), limit)
                return out
            target = ranked[0]
            mine, file = [target], target.path
            callee_uses = [u for u in self.reader.uses_in(file, target.line, target.end_line) if u.kind == CALL]
        else:
            assert path is not None
            mine = self.reader.definitions_in([path]).get(path, [])
            file = path
            out.definition = [Related(symbol=d.symbol, path=d.path, line=d.line) for d in mine[:limit]]
            callee_uses = [u for u in self.reader.uses_in(path, 1, 1 << 31) if u.kind == CALL]
        names = {d.name for d in mine}
        uses = [
            u for u in self.reader.uses(names, MAX_SCAN) if u.kind != IMPORT and (symbol is not None or u.path != file)
        ]
        self._callers(out, self.resolving(uses, self.reader.definitions_named(names), set(mine)), limit)
        self._callees(out, callee_uses, file, limit)
        self._imports(out, file, limit)
        return out

    def _callers(self, out: RelatedResult, uses: list[Use], limit: int) -> None:
        uses = [u for u in uses if u.kind != IMPORT]
        holders = self.holders(uses[: limit * 4])
        seen: set[tuple[str, int]] = set()
        for u in sorted(uses, key=lambda u: (u.path, u.line)):
            if (u.path, u.line) in seen:
                continue
            seen.add((u.path, u.line))
            out.callers.append(Related(symbol=self.holder(holders, u), path=u.path, line=u.line))
        if len(out.callers) > limit:
            out.warnings.append(f"{len(out.callers)} callers: the first {limit}")
            del out.callers[limit:]

    def _callees(self, out: RelatedResult, uses: list[Use], file: str, limit: int) -> None:
        candidates = self.reader.definitions_named({u.name for u in uses})
        by_name: dict[str, list[Definition]] = {}
        for d in candidates:
            by_name.setdefault(d.name, []).append(d)
        seen: set[Definition] = set()
        for u in uses:
            for d in self.resolver.best(by_name.get(u.name, []), file, u.qualifier)[:3]:
                if d not in seen:
                    seen.add(d)
                    out.callees.append(Related(symbol=d.symbol, path=d.path, line=d.line))
        if len(out.callees) > limit:
            out.warnings.append(f"{len(out.callees)} callees: the first {limit}")
            del out.callees[limit:]

    def _imports(self, out: RelatedResult, file: str, limit: int) -> None:
        paths = self.resolver.paths
        seen: set[str] = set()
        for i in self.reader.imports_of([file]).get(file, []):
            for target in paths.resolve(i.key):
                if target != file and target not in seen:
                    seen.add(target)
                    out.imports.append(Related(symbol=i.module, path=target, line=1))
        stem = Path(file).stem.lower()
        folder = Path(file).parent.name.lower()
        words = [w for w in (stem, folder) if w]
        importers = set(self.reader.imports_mentioning(words, MAX_SCAN))
        for i in sorted(importers, key=lambda i: (i.path, i.line, i.module)):
            if i.path != file and file in paths.resolve(i.key):
                out.imported_by.append(Related(symbol=i.module, path=i.path, line=i.line))
        for name, items in (("imports", out.imports), ("importedBy", out.imported_by)):
            if len(items) > limit:
                out.warnings.append(f"{len(items)} {name}: the first {limit}")
                del items[limit:]


def references_of(manifest: Path, symbol: str, path: str | None = None, limit: int = 2000) -> list[Location]:
    """The uses of `symbol` in the index whose manifest is `manifest` (`index.handle.manifest_of(root)`
    for an indexed folder), as `rag/references` finds them: for scripts (an evaluation against a
    language server's references). Read-only; the folder's owner may be indexing meanwhile."""
    with GraphReader(manifest) as reader:
        return Graph(reader, PathIndex(reader.files())).references(symbol, path, limit).locations
