"""The repository map of one index: its files ranked by personalised PageRank over the file
reference graph, and the signatures of each top file's most used definitions, within a token
budget. The anchor is aider's repomap (a file that uses a name defined in another points to
it; identifiers the question mentions and long descriptive names weigh more, private and
everywhere-defined ones less; the walk restarts at the files the question is about), with one
difference: a use points to the definitions it resolves to by import scope (resolve.py: its
own file, an imported file, its folder, else all of them, sharing the weight), not to every
file defining the name.

Memory: the graph is built from aggregated rows (uses per file and name, counted by SQLite), as
an edge list of file pairs in numpy arrays; the definitions are read for the top files only.
A definition's share of its file's rank is its share of the uses pointing at that file (a
one-pass approximation of aider's redistribution over each referrer's edges)."""

from __future__ import annotations

import math
import posixpath
import re
from collections import defaultdict

from ragls.graph import outline
from ragls.graph.read import Definition, GraphReader
from ragls.graph.resolve import PathIndex
from ragls.protocol import MapDefinition, MapFile

MAX_DEFINERS = 20  # a name defined in more files than this draws no edges (`get`, `run`)
_DAMPING = 0.85
_ITERATIONS = 100
_TOLERANCE = 1e-9
_MAP_FILES = 300  # files whose definitions are read for the map, best first
_PER_FILE = 40  # definitions of one file considered
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def mentioned(query: str | None) -> set[str]:
    """The identifiers a question names, as written."""
    return set(_WORD.findall(query or ""))


# A use that resolves only "elsewhere" (neither its file, an import nor its folder defines the
# name) is mostly a builtin or a dependency's name that a file of the project happens to define
# too (`str`, `get`, `format`): it counts a tenth. Without this a 1,554-file corpus mapped methods
# named `str`, `type` and `len` first.
_ELSEWHERE = 0.1


def _weight(name: str, words: set[str]) -> float:
    """aider's multipliers: a named identifier x10, a long snake/camel/kebab name x10, a private
    one x0.1 (one resolving to many files x0.1: at the caller)."""
    mul = 1.0
    if name.lower() in words:
        mul *= 10
    compound = "_" in name.strip("_") or (any(c.isupper() for c in name) and any(c.islower() for c in name))
    if compound and len(name) >= 8:
        mul *= 10
    if name.startswith("_"):
        mul *= 0.1
    return mul


def pagerank(n: int, edges: dict[tuple[int, int], float], restart: list[float]) -> list[float]:
    """Personalised PageRank by power iteration; `restart` sums to 1 (dangling files restart too)."""
    import numpy as np

    p = np.asarray(restart, dtype=np.float64)
    if not edges:
        return p.tolist()
    pairs = np.fromiter((s for s, _ in edges), dtype=np.int64, count=len(edges))
    targets = np.fromiter((t for _, t in edges), dtype=np.int64, count=len(edges))
    weights = np.fromiter(edges.values(), dtype=np.float64, count=len(edges))
    out = np.bincount(pairs, weights=weights, minlength=n)
    share = weights / out[pairs]
    dangling = out == 0
    r = p.copy()
    for _ in range(_ITERATIONS):
        nxt = _DAMPING * np.bincount(targets, weights=share * r[pairs], minlength=n)
        nxt += (_DAMPING * r[dangling].sum() + (1 - _DAMPING)) * p
        if np.abs(nxt - r).sum() < _TOLERANCE:
            r = nxt
            break
        r = nxt
    return r.tolist()  # type: ignore[no-any-return]


def ranked_files(
    reader: GraphReader, paths: PathIndex, seeds: dict[str, float], named: set[str]
) -> tuple[list[str], list[float], dict[str, dict[str, float]]]:
    """The index's files, their ranks (scaled: 1.0 is an average file), and per file the share of
    the uses pointing at it that each of its names draws. The walk restarts at `seeds` (file ->
    weight), at the files defining a `named` identifier and at those named like one (aider's
    mentioned identifiers and files)."""
    words = {w.lower() for w in named}
    files = reader.files()
    ids = {p: i for i, p in enumerate(files)}
    folders = [posixpath.dirname(p) for p in files]
    resolved: dict[str, list[int]] = {}
    imported: dict[int, set[int]] = defaultdict(set)
    for imp in reader.all_imports():
        if imp.key not in resolved:
            resolved[imp.key] = [ids[t] for t in paths.resolve(imp.key) if t in ids]
        src = ids.get(imp.path)
        if src is not None:
            imported[src].update(resolved[imp.key])
    definers: dict[str, list[int]] = defaultdict(list)
    for name, path in reader.definers(MAX_DEFINERS):
        if path in ids:
            definers[name].append(ids[path])
    edges: dict[tuple[int, int], float] = defaultdict(float)
    inbound: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    weights: dict[str, float] = {}
    for path, name, count in reader.use_counts(MAX_DEFINERS):
        src = ids.get(path)
        candidates = definers.get(name)
        if src is None or not candidates:
            continue
        mul = weights.get(name)
        if mul is None:
            mul = weights[name] = _weight(name, words)
        if src in candidates:
            targets = [src]
        else:
            targets = [c for c in candidates if c in imported.get(src, ())] or [
                c for c in candidates if folders[c] == folders[src]
            ]
            if not targets:
                targets, mul = candidates, mul * _ELSEWHERE
        if len(targets) > 5:
            mul *= 0.1
        w = mul * math.sqrt(count) / len(targets)
        for t in targets:
            edges[(src, t)] += w
            inbound[t][name] += w
    n = len(files)
    if not n:
        return [], [], {}
    restart = [0.0] * n
    for path, weight in seeds.items():
        if path in ids:
            restart[ids[path]] += weight
    for i, path in enumerate(files):  # a file the question names (`invoice` -> invoice.py)
        if posixpath.splitext(posixpath.basename(path))[0].lower() in words:
            restart[i] += 1.0
    for d in reader.definitions_named(named):  # a definition it names (`tryAcquire`)
        if d.path in ids:
            restart[ids[d.path]] += 1.0
    total = sum(restart)
    restart = [r / total for r in restart] if total > 0 else [1.0 / n] * n
    ranks = [r * n for r in pagerank(n, edges, restart)]
    shares: dict[str, dict[str, float]] = {}
    for t, names in inbound.items():
        whole = sum(names.values())
        shares[files[t]] = {name: w / whole for name, w in names.items()}
    return files, ranks, shares


def file_ranking(reader: GraphReader, paths: PathIndex, seeds: dict[str, float], named: set[str], n: int) -> list[str]:
    """The first `n` files of the walk that restarts at `seeds` and at the files defining a
    `named` identifier: what a question's first hits and the names it spells are connected to
    (a ranking signal of retrieval, query/retrieval.py)."""
    files, ranks, _ = ranked_files(reader, paths, seeds, named)
    order = sorted(range(len(files)), key=lambda i: (-ranks[i], files[i]))
    return [files[i] for i in order[:n]]


def repo_map(
    reader: GraphReader, paths: PathIndex, seeds: dict[str, float], query: str | None, max_tokens: int
) -> list[MapFile]:
    """The map's files, best first, each with the definitions the budget holds (in line order)."""
    files, ranks, shares = ranked_files(reader, paths, seeds, mentioned(query))
    order = sorted(range(len(files)), key=lambda i: (-ranks[i], files[i]))
    top = [files[i] for i in order[:_MAP_FILES]]
    rank_of = {files[i]: ranks[i] for i in order[:_MAP_FILES]}
    defs = reader.definitions_in(top)
    scored: list[tuple[float, str, Definition]] = []
    for path in top:
        mine = defs.get(path, [])
        share = shares.get(path, {})
        # Used definitions by their share of the file's rank; the file's own top-level ones a
        # little, in order, so a file the question is about shows its outline even unused.
        own = [d for d in mine if not d.scope][:_PER_FILE]
        base = {d: 0.05 / (1 + i) for i, d in enumerate(own)}
        for d in mine:
            s = share.get(d.name, 0.0) + base.get(d, 0.0)
            if s > 0:
                scored.append((rank_of[path] * s, path, d))
    scored.sort(key=lambda t: (-t[0], t[1], t[2].line))
    chosen: dict[str, list[Definition]] = {}
    used = 0
    for _, path, d in scored:
        f = MapFile(path=path, score=0.0, definitions=[])
        cost = outline.tokens(outline.line(_definition(d))) + (
            0 if path in chosen else outline.tokens(outline.header(f, False))
        )
        if used + cost <= max_tokens:
            chosen.setdefault(path, []).append(d)
            used += cost
    out: list[MapFile] = []
    for path in top:
        if path in chosen:
            items = [_definition(d) for d in sorted(chosen[path], key=lambda d: d.line)]
            out.append(MapFile(path=path, score=round(rank_of[path], 4), definitions=items))
        else:  # a file of the first rank whose definitions did not fit: its path, if that fits
            f = MapFile(path=path, score=round(rank_of[path], 4), definitions=[])
            cost = outline.tokens(outline.header(f, False))
            if used + cost <= max_tokens:
                out.append(f)
                used += cost
    return out


def _definition(d: Definition) -> MapDefinition:
    return MapDefinition(symbol=d.symbol, kind=d.kind, line=d.line, signature=d.signature)
