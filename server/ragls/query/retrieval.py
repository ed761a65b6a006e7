"""Retrieval: query -> hybrid search in Qdrant (dense + BM25 sparse, fused by weighted RRF in
the engine) -> name rerank of the first hits (index/name_rerank.py) -> for a change description,
the files its words match in the git history and, under plain BM25, in the source code lifted
(git/history.py, source_lexicon.py) -> demotion of tests,
declarations, changelogs and repository process files -> exact-definition boost -> per-file
cap and overlap merging -> budgeted context. Every step after the engine is a few list
operations over at most `limit` hits, so a query costs one embedding, one Qdrant query, one
embedding-cache lookup (and for a change, two in-memory rankings of files). Hybrid beat dense only
by 0.065 ctxR@4k on dev and lexical only by 0.097; the later steps' figures are at the Tuning fields."""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

import pathspec

from ragls.chunking.model import split_humps
from ragls.config import RetrievalSettings
from ragls.embedding import Embedder
from ragls.embedding.cache import EmbeddingCache
from ragls.git.history import ChangeHistory, FileRanker
from ragls.index import name_rerank
from ragls.ingest.gitignore import BACKEND
from ragls.query import learned
from ragls.query.context import ContextChunk, format_context
from ragls.query.features import DECLARATIVE_KINDS
from ragls.query.file_boosts import co_change_lift, file_boost
from ragls.query.learned import Trace
from ragls.query.mentions import is_long, mentioned_files, path_mentions
from ragls.query.query_embedding import shared_query_embedding
from ragls.query.query_words import (
    DECLARATION_QUERY,
    HISTORY_QUERY,
    META_QUERY,
    TEST_QUERY,
    code_names,
    lookup_symbols,
    query_kind,
    query_symbols,
)
from ragls.query.ranker import LinearRanker, bundled
from ragls.store import SearchRequest, Store, StoredHit
from ragls.text import lexical
from ragls.text.languages import is_code
from ragls.text.path_kinds import is_history_path, is_meta_path, is_test_path

if TYPE_CHECKING:
    import numpy as np


class QueryError(ValueError):
    """Bad request input (reported as InvalidParams)."""


@dataclass
class Hit:
    path: str
    start_line: int  # 1-based inclusive
    end_line: int
    symbol: str | None
    kind: str
    language: str
    score: float
    content: str


@dataclass
class RetrieveResult:
    context: str
    hits: list[Hit]
    took_ms: float
    error: str | None = None


@dataclass(frozen=True)
class Tuning:
    """Retrieval constants that are not user settings: the values measured best on the dev
    golden sets (full tables: evaluation-log). `ragls eval` varies them for the ablation table."""

    rrf_k: int = 5  # RRF rank offset: weight / (k+rank); 5 beat 10: ctxR@4k dev 0.707 -> 0.726, held-out 0.780 -> 0.793
    symbol_weight: float = 2.0  # RRF weight of the exact-definition prefetch
    symbol_first: bool = True  # an exactly named definition is moved to the top
    symbol_lookup_only: bool = True  # boost names only in lookup-shaped queries (lookup_symbols)
    test_penalty: float = 0.5  # fused score factor for test files (1.0 = off)
    # Fused score factor for declarative chunks (DECLARATIVE_KINDS; 1.0 = off): 0.5 chosen on
    # dev (0.3-0.7 within 0.002), confirmed on held-out (MRR@10 0.592 -> 0.638).
    declaration_penalty: float = 0.5
    # Fused score factor for release history files (_HISTORY_PATH; 1.0 = off): 0.5 chosen on the
    # commit task's dev repositories (file MRR 0.481 -> 0.508, R@5 unchanged).
    history_penalty: float = 0.5
    # Fused score factor for repository process files (_META_PATH) (1.0 = off): 0.25 chosen on the
    # commit task's dev repositories over x0.5 and 1.0 (CI files, templates and policies share a
    # project's words but answer almost no question about its code); the doc->code golden sets
    # index source folders only. Other prose documents keep their rank: they answer questions too
    # (a runbook).
    meta_penalty: float = 0.25
    # Fused score factor for files in no programming language (docs, configuration, data; 1.0 =
    # off). Off for questions, which docs answer too; CHANGE_TUNING sets it.
    non_code_penalty: float = 1.0
    merge: bool = True  # merge overlapping/adjacent chunks of one file into one hit
    # ...adjacent ones only while the block stays within this many characters (0: any size):
    # 800-1,500 measured alike on dev and held-out (ctxR@4k 0.754 / 0.840), unlimited lower (0.746 / 0.835).
    merge_max_chars: int = 1500
    split_query_humps: bool = True  # `parseHeader` -> `parse Header` before embedding
    limit_factor: int = 4  # fused hits fetched per requested hit (room for caps and demotion)
    # A query that spells out no code name (query_symbols) is prose: the code-tuned dense model
    # ranks it better and BM25 over its English words mostly adds noise, so its lexical weight
    # is scaled down to a tie-breaker; a query naming code keeps the full lexical weight.
    # 0.2 chosen on dev (MRR@10 0.514 -> 0.531 from 1.0), confirmed on held-out (+0.018 MRR@10).
    prose_lexical_factor: float = 0.2
    # Name rerank (ragls.index.name_rerank): the first this many fused hits are ranked again by the
    # query's similarity to their name vectors, joined as one more RRF list of this weight.
    # 10 hits, weight 0.25 chosen on dev, confirmed on held-out (MRR@10 +0.011 dev, +0.016 held-out).
    # 0 hits turns it off.
    name_rerank_hits: int = 10
    name_rerank_weight: float = 0.25
    # Git history (ragls.git.history): the chunks of the files whose commit messages match the
    # query best, among the first this many such files, gain the RRF term of that file's place,
    # at this weight. 20 files, weight 2 chosen on the commit task's dev repositories
    # (offline, file R@5 / MRR 0.572 / 0.478 -> 0.772 / 0.610; weight 3 only as good). 0 files turns it off.
    git_history_files: int = 20
    git_history_weight: float = 2.0
    # Files the query names (mentions.mentioned_files: stack-trace frames, paths in a bug
    # report): their best chunks join the hits with the weighted RRF term of the file's place
    # among the mentions, as one more fused list. 0 turns it off.
    mention_weight: float = 2.0
    mention_chunks: int = 3  # chunks fetched per mentioned file
    # Long queries (mentions.is_long: a bug report, a change description with a body). Their
    # words lift no demotion when `long_exemptions` is off: "test", "expected", "GitHub" or
    # "release" in a report are rarely a request for tests, CI files or changelogs. Tests weigh
    # `long_test_penalty` (None: test_penalty). CHANGE_TUNING's values were chosen on the issue
    # task's dev repositories and confirmed on held-out (figures at CHANGE_TUNING).
    long_exemptions: bool = True
    long_test_penalty: float | None = None
    # Source BM25 (query.source_lexicon), for long queries (mentions.is_long): like the git
    # history, the chunks of the files whose non-test source code matches the query best under
    # plain BM25 gain the RRF term of that file's place among the first `source_files`, at
    # `source_weight`. 0 files: off (questions).
    source_files: int = 0
    source_weight: float = 0.0
    # Co-changes (git_history.FileHistory.co_changes), for long queries: a file that past commits
    # changed together with one of the first `co_change_files` files of the answer moves up,
    # never above that file (co_change_lift). 0 files: off (questions).
    co_change_files: int = 0
    co_change_weight: float = 0.0
    # The code graph (ragls.graph), for long queries: files ranked by the personalised PageRank
    # that restarts at the first `graph_seeds` files of the hits (weighted 1/r^2; 0: none) and at
    # the files defining a name the query spells (query_words.code_names) gain the RRF term of
    # their place among the first `graph_files`, at `graph_weight`. 0 files: off.
    graph_files: int = 0
    graph_weight: float = 0.0
    graph_seeds: int = 10
    # The learned ranker (query.learned) orders the candidates instead of the weights, boosts and
    # demotions above; `ranker_path` names a model file to try ("": the bundled one).
    learned: bool = False
    ranker_path: str = ""
    change: bool = False  # the query describes a change (intent "change"): a feature of the ranker


DEFAULT_TUNING = Tuning()
# A query that describes a change to make (RetrieveParams.intent "change", MCP find_files) wants
# the files it touches: a class or declaration chunk shows its file as well as a function does,
# so declarations keep their rank; and it wants code to edit, so documentation and configuration
# come after code of a similar score (x0.3: 0.1-0.5 measured alike; an exception for queries that
# name docs or config lost on dev, whose doc-fix commits change code comments). Both chosen on
# the commit task's dev repositories (declarations at full weight, no history: file MRR
# 0.478 -> 0.555; docs x0.3: held-out 0.645 -> 0.700); the git history boost is passed to
# retrieve() by the caller.
# A bug report names tests, expectations and CI in its own words and its fix is in the code: for
# long change descriptions tests weigh a quarter and no word lifts a demotion (the issue task,
# held-out MRR@10 0.543 -> 0.560).
# Source BM25 (query.source_lexicon): for a long description, the first 50 files of plain BM25
# over the source code lift their chunks at weight 4 (4-16 x 50-100 files and 0.5-4 x 10-50 measured on the issue task's
# dev repositories: MRR@10 0.620 -> 0.668, held-out 0.559 -> 0.569).
# Co-changes: a fix's second file is the one most often missing from the first five (issue
# task, multi-file fixes); files the history changed with the first two move up, weight 0.5
# (0.25-1 x 1-3 files measured on dev: Acc@5 0.680 -> 0.712, held-out 0.595 -> 0.643).
CHANGE_TUNING = replace(
    DEFAULT_TUNING,
    change=True,
    declaration_penalty=1.0,
    non_code_penalty=0.3,
    long_exemptions=False,
    long_test_penalty=0.25,
    source_files=50,
    source_weight=4.0,
    co_change_files=2,
    co_change_weight=0.5,
)


def tuning_for(intent: str, ranker: str | None = None) -> Tuning:
    """The tuning of a request's intent (RetrieveParams.intent); with `ranker` (a model file, e.g.
    a folder's tuned one: feedback.tuning), ranked by that model instead of the rules."""
    tuning = CHANGE_TUNING if intent == "change" else DEFAULT_TUNING
    return replace(tuning, learned=True, ranker_path=ranker) if ranker else tuning


def uses_source(tuning: Tuning, query: str) -> bool:
    """Whether a request ranks files by the source BM25 (query.source_lexicon): its tuning's, for
    long queries only (measured on bug reports; a one-line change keeps the commit task's ranking)."""
    return bool(tuning.source_files) and tuning.source_weight > 0 and is_long(query)


def compile_globs(globs: list[str]) -> pathspec.PathSpec:
    """The `paths` globs of a request as one matcher; QueryError names a bad glob. Compiled once
    per process for the same globs: the workspace checks them before it waits, the folder's
    index then filters by them."""
    return _compiled(tuple(globs))


@functools.lru_cache(maxsize=64)
def _compiled(globs: tuple[str, ...]) -> pathspec.PathSpec:
    for g in globs:
        if g.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", g) or ".." in g.replace("\\", "/").split("/"):
            raise QueryError(f"paths: {g!r} must be a workspace-relative glob without '..'")
    try:
        # re2: a glob from a client or agent is untrusted, and must match in linear time.
        return pathspec.PathSpec.from_lines("gitignore", globs, backend=BACKEND)
    except Exception as exc:  # pathspec and re2 raise several types for malformed patterns
        raise QueryError(f"paths: invalid glob: {exc}") from exc


def _to_hit(h: StoredHit) -> Hit:
    p = h.payload
    return Hit(
        str(p.get("path", "")),
        int(p.get("start_line", 1)),
        int(p.get("end_line", 1)),
        p.get("symbol"),
        str(p.get("kind", "text")),
        str(p.get("language", "text")),
        h.score,
        str(p.get("text", "")),
    )


def _merge(a: Hit, b: Hit) -> Hit:
    """Union of two overlapping or adjacent chunks of one file, line-exact."""
    first, second = (a, b) if a.start_line <= b.start_line else (b, a)
    lines = first.content.split("\n")
    extra = second.content.split("\n")
    skip = first.end_line - second.start_line + 1  # lines of `second` already in `first`
    if second.end_line > first.end_line:
        lines.extend(extra[max(0, skip) :])
    symbol = a.symbol if a.symbol == b.symbol else (a.symbol or b.symbol)
    return Hit(
        a.path,
        first.start_line,
        max(first.end_line, second.end_line),
        symbol,
        a.kind if a.kind == b.kind else "merged",
        a.language,
        max(a.score, b.score),
        "\n".join(lines),
    )


def dedupe(hits: list[Hit], max_per_file: int, merge: bool = True, merge_max_chars: int = 0) -> list[Hit]:
    """At most `max_per_file` hits per file; with `merge`, a hit overlapping or adjacent to a
    better one of the same file is folded into it (one block of context, not two). An adjacent
    hit is folded in only while the block stays within `merge_max_chars` (0: no limit): a big
    block at the better hit's rank would push other files' hits out of the context budget."""
    out: list[Hit] = []
    per_file: dict[str, int] = {}
    for h in hits:
        if merge:
            k = next(
                (
                    k
                    for k, o in enumerate(out)
                    if o.path == h.path and h.start_line <= o.end_line + 1 and o.start_line <= h.end_line + 1
                ),
                None,
            )
            if k is not None:
                merged = _merge(out[k], h)
                overlaps = h.start_line <= out[k].end_line and out[k].start_line <= h.end_line
                if overlaps or not merge_max_chars or len(merged.content) <= merge_max_chars:
                    out[k] = merged
                    continue
        elif any(o.path == h.path and o.start_line == h.start_line and o.end_line == h.end_line for o in out):
            continue
        if per_file.get(h.path, 0) >= max_per_file:
            continue
        per_file[h.path] = per_file.get(h.path, 0) + 1
        out.append(h)
    return out


def demote(
    query: str,
    hits: list[Hit],
    test_penalty: float,
    declaration_penalty: float = 1.0,
    history_penalty: float = 1.0,
    meta_penalty: float = 1.0,
    non_code_penalty: float = 1.0,
    exemptions: bool = True,
) -> list[Hit]:
    """Scale the fused score of hits in test files by `test_penalty` unless the query is about
    tests, of declarative chunks (classes, headers, declarations) by `declaration_penalty`
    unless the query names a kind of declaration, of release history files by
    `history_penalty` unless the query is about releases, of repository process files by
    `meta_penalty` unless the query is about them, and of files in no programming language
    by `non_code_penalty`. Without `exemptions` the query's words lift none of them. Stable:
    equal scores keep the engine's order."""

    def unless(penalty: float, asked: re.Pattern[str]) -> float:
        return penalty if penalty < 1.0 and not (exemptions and asked.search(query)) else 1.0

    test = unless(test_penalty, TEST_QUERY)
    declaration = unless(declaration_penalty, DECLARATION_QUERY)
    history = unless(history_penalty, HISTORY_QUERY)
    meta = unless(meta_penalty, META_QUERY)
    if test == 1.0 and declaration == 1.0 and history == 1.0 and meta == 1.0 and non_code_penalty == 1.0:
        return hits
    scored = []
    for i, h in enumerate(hits):
        factor = (
            (test if is_test_path(h.path) else 1.0)
            * (declaration if h.kind in DECLARATIVE_KINDS else 1.0)
            * (history if is_history_path(h.path) else meta if is_meta_path(h.path) else 1.0)
            * (1.0 if is_code(h.language) else non_code_penalty)
        )
        scored.append((h.score * factor, i, h if factor == 1.0 else replace(h, score=h.score * factor)))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [h for _, _, h in scored]


def mention_boost(
    hits: list[StoredHit], near: list[StoredHit], files: list[str], weight: float, k: int
) -> list[StoredHit]:
    """The hits plus the best chunks of the files the query names (`near`: the same query within
    those files), each chunk of a named file gaining the weighted RRF term of its file's place
    in `files`, as if that ranking were one more fused list. A chunk found only within the
    named files brings no score of its own but that term. Stable on ties."""
    place = {path: rank for rank, path in enumerate(files)}
    seen = {h.id for h in hits}
    merged = hits + [replace(h, score=0.0) for h in near if h.id not in seen]
    scored = []
    for i, h in enumerate(merged):
        rank = place.get(str(h.payload.get("path", "")))
        score = h.score if rank is None else h.score + name_rerank.rrf_score(rank, weight, k)
        scored.append((score, i, h if rank is None else replace(h, score=score)))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [h for _, _, h in scored]


class _Named(Protocol):
    symbol: str | None


_N = TypeVar("_N", bound=_Named)


def symbol_first(hits: list[_N], symbols: list[str]) -> list[_N]:
    """Definitions whose qualified name, or its last component, equals a name the query spells
    out move to the top (stable). Hits of one index, or chunks fused from several folders."""
    wanted = set(symbols)

    def named(h: _N) -> bool:
        if not h.symbol:
            return False
        parts = re.sub(r"::|#", ".", h.symbol).lower().split(".")
        return any(".".join(parts[i:]) in wanted for i in range(len(parts)))

    return sorted(hits, key=lambda h: not named(h))


def lexical_rerank(query: str, hits: list[Hit]) -> list[Hit]:
    """Cheap second stage: fused rank plus the share of query terms a chunk contains."""
    terms = set(lexical.tokenize(query))
    if not terms:
        return hits
    scored = []
    for rank, h in enumerate(hits):
        toks = set(lexical.tokenize(f"{h.path} {h.symbol or ''} {h.content}"))
        overlap = len(terms & toks) / len(terms)
        scored.append((1.0 / (10 + rank) + 0.05 * overlap, rank, h))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [h for _, _, h in scored]


def lexical_weight(query: str, settings: RetrievalSettings, tuning: Tuning = DEFAULT_TUNING) -> float:
    """The lexical prefetch's RRF weight for this query (see Tuning.prose_lexical_factor)."""
    return settings.lexical_weight * (1.0 if query_symbols(query) else tuning.prose_lexical_factor)


@functools.lru_cache(maxsize=32)
def _load_ranker(path: str, stamp: tuple[int, int]) -> LinearRanker | None:
    del stamp  # part of the key only
    return LinearRanker.load(Path(path)) if path else bundled()


def load_ranker(path: str) -> LinearRanker | None:
    """The model in `path` ("": the bundled one, None when none is shipped), read again when the
    file changes: a folder's tuned model (feedback.tuning) is rewritten or erased while a server
    runs. Raises OSError, or ValueError for a file that is no model of today's FEATURES."""
    if not path:
        return _load_ranker("", (0, 0))
    st = Path(path).stat()
    return _load_ranker(path, (st.st_mtime_ns, st.st_size))


def _model(tuning: Tuning) -> LinearRanker | None:
    return load_ranker(tuning.ranker_path)


class GraphRanker(Protocol):
    def rank_files(self, seeds: dict[str, float], named: set[str], n: int) -> list[str]: ...


def graph_ranking(graph: GraphRanker, hits: list[Hit], query: str, tuning: Tuning) -> list[str]:
    """The code graph's files for a query: connected to its first hits and the names it spells."""
    firsts = list(dict.fromkeys(h.path for h in hits))[: tuning.graph_seeds]
    seeds = {path: 1.0 / (i + 1) ** 2 for i, path in enumerate(firsts)}
    named = code_names(query)
    if not seeds and not named:
        return []
    return graph.rank_files(seeds, named, tuning.graph_files)


def _ruled(
    stored: list[StoredHit],
    query: str,
    long: bool,
    fused: bool,
    dense: np.ndarray | None,
    embedder: Embedder | None,
    names: EmbeddingCache | None,
    history: ChangeHistory | None,
    source: FileRanker | None,
    tuning: Tuning,
    graph: GraphRanker | None = None,
) -> list[Hit]:
    """The hand-set order: the fused hits, name rerank, the history's and the source BM25's file
    boosts, then the demotions (measured one by one: the figures are at the Tuning fields)."""
    if fused and dense is not None and tuning.name_rerank_hits and name_rerank.usable(embedder, names):
        stored = name_rerank.rerank_hits(
            stored,
            dense,
            names,  # type: ignore[arg-type]  # usable() checked it
            tuning.name_rerank_hits,
            tuning.name_rerank_weight,
            tuning.rrf_k,
        )
    hits = [_to_hit(h) for h in stored]
    if (
        history is not None
        and fused  # the boost is one more RRF list: it adds to RRF scores only
        and tuning.git_history_files
        and tuning.git_history_weight > 0
    ):
        # Before the demotions, which then scale it too: a test, changelog or README that past
        # commits touched alongside the code must not be lifted past the code.
        hits = file_boost(hits, history.rank(query, tuning.git_history_files), tuning.git_history_weight, tuning.rrf_k)
    if source is not None and fused and uses_source(tuning, query):
        hits = file_boost(hits, source.rank(query, tuning.source_files), tuning.source_weight, tuning.rrf_k)
    if graph is not None and fused and long and tuning.graph_files and tuning.graph_weight > 0:
        hits = file_boost(hits, graph_ranking(graph, hits, query, tuning), tuning.graph_weight, tuning.rrf_k)
    return demote(
        query,
        hits,
        tuning.long_test_penalty if long and tuning.long_test_penalty is not None else tuning.test_penalty,
        tuning.declaration_penalty,
        tuning.history_penalty,
        tuning.meta_penalty,
        tuning.non_code_penalty,
        exemptions=not long or tuning.long_exemptions,
    )


@dataclass(frozen=True)
class Ask:
    """One question to `retrieve`: what is asked, where, and how much comes back."""

    query: str
    top_k: int
    max_chars: int  # the context block's budget (0: no context block)
    allowed_paths: list[str] | None = None  # only these files (a `paths` glob, resolved)
    languages: list[str] | None = None
    tuning: Tuning = DEFAULT_TUNING


@dataclass(frozen=True)
class Sources:
    """What an open index offers a question, read-only for its length. `names`: the index's
    embedding cache, where the indexer keeps the chunks' name vectors (ragls.index.name_rerank);
    without it the name rerank is skipped. `history`: the workspace's git history
    (ragls.git.history); without it no file is lifted by its commit messages. `files`: the
    index's files, asked for only when the query names some (a stack trace, a path in a bug
    report: mentions.mentioned_files); their best chunks join the hits. `source`: the index's
    source BM25 (index.source_lexicon), for the tunings that use it. `graph`: the index's code
    graph (graph.source.GraphSource), for the tunings that use it."""

    store: Store
    embedder: Embedder | None = None
    dense_available: bool = True
    names: EmbeddingCache | None = None
    history: ChangeHistory | None = None
    files: Callable[[], Iterable[str]] | None = None
    source: FileRanker | None = None
    graph: GraphRanker | None = None


def retrieve(index: Sources, settings: RetrievalSettings, ask: Ask, trace: Trace | None = None) -> RetrieveResult:
    """`ask` over `index`: ranked hits and their context block. `trace`: called with every
    query's candidates and their feature rows (training the ranker)."""
    store, embedder, dense_available = index.store, index.embedder, index.dense_available
    names, history, files, source, graph = index.names, index.history, index.files, index.source, index.graph
    query, top_k, max_chars, tuning = ask.query, ask.top_k, ask.max_chars, ask.tuning
    allowed_paths, languages = ask.allowed_paths, ask.languages
    t0 = time.perf_counter()
    use_dense = embedder is not None and dense_available and settings.mode != "lexical"
    dense = None
    if use_dense and embedder is not None:
        dense = shared_query_embedding.embed(embedder, split_humps(query) if tuning.split_query_humps else query)
    sparse = lexical.query_vector(query) if settings.mode != "dense" else ([], [])
    symbols: list[str] = []
    if settings.symbol_boost:
        symbols = lookup_symbols(query) if tuning.symbol_lookup_only else query_symbols(query)
    req = SearchRequest(
        dense=dense,
        sparse=sparse,
        limit=max(top_k * tuning.limit_factor, 20),
        candidates=max(settings.candidates, top_k * 4),
        paths=allowed_paths,
        languages=languages,
        symbol_names=symbols,
        fusion=settings.fusion,
        weights=(settings.dense_weight, lexical_weight(query, settings, tuning), tuning.symbol_weight),
        rrf_k=tuning.rrf_k,
    )
    stored = store.search(req)
    mentioned: list[str] = []
    if files is not None and tuning.mention_weight > 0 and settings.fusion == "rrf" and path_mentions(query):
        mentioned = mentioned_files(query, allowed_paths if allowed_paths is not None else files())
    near: list[StoredHit] = []
    if mentioned:
        near = store.search(
            replace(req, paths=mentioned, limit=len(mentioned) * tuning.mention_chunks, symbol_names=[])
        )
    long = is_long(query)
    fused = dense is not None and bool(sparse[0]) and settings.fusion == "rrf"
    model = _model(tuning) if tuning.learned else None
    ruled = model is None and trace is None
    if not ruled:
        history_files = history.rank(query, tuning.git_history_files) if history is not None and fused else []
        source_files = (
            source.rank(query, tuning.source_files) if source is not None and uses_source(tuning, query) else []
        )
        names_ok = names if name_rerank.usable(embedder, names) else None
        seen = {h.id for h in stored}
        pool, signals = learned.candidates(
            store,
            req,
            stored + [h for h in near if h.id not in seen],
            dense,
            names_ok,
            symbols,
            mentioned,
            history_files,
            source_files,
        )
        hits = [_to_hit(h) for h in learned.rank(query_kind(query, tuning.change), pool, signals, model, trace)]
    else:
        if near:
            stored = mention_boost(stored, near, mentioned, tuning.mention_weight, tuning.rrf_k)
        hits = _ruled(stored, query, long, fused, dense, embedder, names, history, source, tuning, graph)
        if symbols and tuning.symbol_first:
            hits = symbol_first(hits, symbols)
    if settings.rerank == "lexical":
        hits = lexical_rerank(query, hits)
    hits = dedupe(hits, settings.max_per_file, tuning.merge, tuning.merge_max_chars)[:top_k]
    if history is not None and fused and long and tuning.co_change_files and tuning.co_change_weight > 0:
        # After the cut, among the files of the answer: a file further down moves in no further.
        hits = co_change_lift(hits, history, tuning.co_change_files, tuning.co_change_weight)
        if ruled and symbols and tuning.symbol_first:
            hits = symbol_first(hits, symbols)
    context = format_context(
        [ContextChunk(h.path, h.start_line, h.end_line, h.symbol, h.content) for h in hits], max_chars
    )
    return RetrieveResult(context, hits, (time.perf_counter() - t0) * 1000)
