"""One file -> its prepared chunks: read, redact, chunk, hash, sparse vector, payload.

Pure work without index state, so it runs anywhere: in the indexer thread for a few files (an
open buffer, a save), in a pool of worker processes for a scan. The lexical pass is CPU-bound
Python: threads would share one core through the GIL, processes use all of them (two workers made
the pass 2.2x faster on two cores), and the indexer thread is left with the store and manifest
writes, which stay in one place.

Workers are started with `spawn`, which imports the parent's main module in each worker: a
program that runs an `Indexer` itself must guard its entry point with
`if __name__ == "__main__":`, like any multiprocessing program (`ragls`, `python -m ragls`
and pytest already do)."""

from __future__ import annotations

import os
import threading
import time
import uuid
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragls.chunking import Chunk, TooManyChunks, check_budget, chunk_file
from ragls.chunking.model import embedding_hash
from ragls.config import IndexingSettings, Settings
from ragls.ingest.discovery import Discovery, ReadResult, decode_source, discover, read_source
from ragls.ingest.secrets import SECRET_CONTENT, scan
from ragls.system import memory
from ragls.text import lexical

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from tree_sitter import Node

    from ragls.chunking.syntax import SyntaxReader
    from ragls.graph.model import FileGraph

_CHUNK_NS = uuid.UUID("6f1c2a4e-9a61-4d8e-bb1e-3c1f6c0e5a10")

TOO_MANY_CHUNKS = "too_many_chunks"  # the skip reason (chunking.MAX_CHUNKS_PER_FILE)


@dataclass(slots=True)
class FileJob:
    rel: str
    language: str
    buffer: str | None = None  # an open editor buffer's text; None: read the file
    unchanged_if: str | None = None  # the stored hash: equal content needs no chunking


@dataclass(slots=True)
class PreparedChunk:
    id: str
    text_hash: str
    # Arrays, not lists: they cross the process boundary as raw bytes, and unpickling lists of
    # ints and floats was half of the cost of receiving a chunk in the server's process.
    sparse: tuple[Sequence[int], Sequence[float]]
    payload: dict[str, object]


@dataclass(slots=True)
class Prepared:
    rel: str
    digest: str = ""
    size: int = 0
    mtime_ns: int = 0
    skip: str | None = None  # why the file is not indexed (binary, too_large, vanished...)
    error: str | None = None  # chunking failed
    unchanged: bool = False  # content equals `unchanged_if`: nothing was chunked
    chunks: list[PreparedChunk] | None = None
    graph: FileGraph | None = None  # definitions, references and imports (ragls.graph), from the same parse


def chunk_and_graph(
    path: str, language: str, text: str, settings: IndexingSettings | None = None
) -> tuple[list[Chunk], FileGraph | None]:
    """`chunk_file`, and the file's graph facts read from the same syntax tree (None when the
    file was not parsed: not a programming language, too long, or a grammar failure)."""
    trees: list[tuple[SyntaxReader, Node]] = []
    chunks = chunk_file(path, language, text, settings, trees)
    if not trees:
        return chunks, None
    from ragls.graph.extract import file_graph  # the chunker alone (eval, export) never loads it

    reader, root = trees[0]
    try:
        return chunks, file_graph(reader, root)
    except (ValueError, RecursionError, LookupError):  # a query hiccup costs the graph, not the chunks
        return chunks, None


def _packed(sparse: tuple[list[int], list[float]]) -> tuple[array[int], array[float]]:
    return array("i", sparse[0]), array("d", sparse[1])  # term ids are 31-bit (lexical.token_id)


def chunk_id(path: str, start_line: int, end_line: int, text_hash: str) -> str:
    return str(uuid.uuid5(_CHUNK_NS, f"{path}\n{start_line}\n{end_line}\n{text_hash}"))


def symbol_names(symbol: str | None) -> list[str]:
    """Exact-match keys for symbol boosting: the qualified name and each dotted suffix."""
    if not symbol:
        return []
    parts = symbol.replace("::", ".").split(".")
    return sorted({".".join(parts[i:]).lower() for i in range(len(parts))})


def lexical_text(c: Chunk) -> str:
    # Path and symbol words count as terms too: a query naming a module or class should hit.
    # The symbol appears twice, a poor man's field weight (lexical-only MRR@10 0.419 -> 0.426, R@5 0.581 -> 0.601).
    sym = c.symbol or ""
    return f"{c.path}\n{sym}\n{sym}\n{c.text}"


def payload(c: Chunk, text_hash: str) -> dict[str, object]:
    # Only what a reader uses: each key costs ~3.5 µs to convert into a Qdrant point under
    # the GIL (a list ~1 µs per element), and that conversion is the largest part of the
    # lexical pass left in the server's process (dropping unused keys took a point from 79 to 45 µs).
    return {
        "path": c.path,
        "language": c.language,
        "start_line": c.start_line,
        "end_line": c.end_line,
        "kind": c.kind,
        "symbol": c.symbol,
        "symbol_names": symbol_names(c.symbol),
        "signature": c.signature,
        "text": c.text,
        "text_hash": text_hash,
    }


def _read(root: str, job: FileJob, max_bytes: int) -> tuple[ReadResult, int, int]:
    if job.buffer is not None:
        data = job.buffer.encode("utf-8", "surrogatepass")
        if len(data) > max_bytes:  # the same cap as the file on disk
            return ReadResult(None, "", "too_large"), len(data), 0
        return decode_source(data), len(data), 0
    path = Path(root) / job.rel
    try:
        st = os.stat(path)
    except OSError:
        return ReadResult(None, "", "vanished"), 0, 0
    return read_source(path, max_bytes, root), st.st_size, st.st_mtime_ns


def prepare_file(root: str, job: FileJob, indexing: IndexingSettings, max_bytes: int) -> Prepared:
    res, size, mtime = _read(root, job, max_bytes)
    out = Prepared(job.rel, res.digest, size, mtime)
    if res.skip:
        out.skip = res.skip
        return out
    if job.unchanged_if is not None and job.unchanged_if == res.digest:
        out.unchanged = True
        return out
    try:
        check_budget(job.language, res.text or "", indexing)  # before the scan: a 1M-line log costs a count
        redacted = scan(res.text or "", job.rel)
        if redacted.secret_content:  # a key, a kubeconfig: nothing worth a chunk is left
            out.skip = SECRET_CONTENT
            return out
        chunks, out.graph = chunk_and_graph(job.rel, job.language, redacted.text, indexing)
    except TooManyChunks:
        out.skip = TOO_MANY_CHUNKS
        return out
    except Exception as exc:  # a parser bug must cost one file, not the index
        out.error = f"chunking failed: {exc!r}"
        return out
    prepared: list[PreparedChunk] = []
    for c in chunks:
        th = embedding_hash(c.embedding_text())  # once per chunk: it keys the id, cache and payload
        prepared.append(
            PreparedChunk(
                chunk_id(c.path, c.start_line, c.end_line, th),
                th,
                _packed(lexical.sparse_vector(lexical_text(c))),
                payload(c, th),
            )
        )
    out.chunks = prepared
    return out


def prepare_batch(root: str, jobs: list[FileJob], indexing: IndexingSettings, max_bytes: int) -> list[Prepared]:
    """The unit of work of a pool worker: a few files, results in the same order."""
    return [prepare_file(root, j, indexing, max_bytes) for j in jobs]


def worker_batch(root: str, jobs: list[FileJob], indexing: IndexingSettings, max_bytes: int) -> list[Prepared]:
    """`prepare_batch` in a pool worker, which then hands its freed pages back to the system
    (rate-limited, as in the server): file texts and parse trees are freed after each task but
    glibc keeps their pages. One process preparing chunks150k's files the way a worker does
    ended at 98 MB of RSS with it, 111 MB without."""
    out = prepare_batch(root, jobs, indexing, max_bytes)
    memory.trim()
    return out


def init_worker(nice: int) -> None:
    """Pool worker start: the same niceness as the indexer thread (the editor comes first), and
    an end with the process that started it."""
    if nice and hasattr(os, "nice"):
        try:
            os.nice(nice)
        except OSError:
            pass
    _exit_with_parent(os.getppid())


def _exit_with_parent(parent: int, every: float = 0.5) -> None:
    """A server that ends without closing its pool (an editor's SIGTERM, a crash) must leave no
    workers behind. Idle workers never notice by themselves: each holds both ends of the task
    queue, so it never sees the queue close. Checked by tests/unit/test_prepare_workers.py."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(0)

    threading.Thread(target=watch, name="ragls-exit-with-parent", daemon=True).start()


class PreparePool:
    """Worker processes running `prepare_batch`, started on first use; `close` stops them
    (the indexer does so when a pass ends, so an idle server keeps no workers)."""

    def __init__(self, workers: int, nice: int) -> None:
        self.workers = workers
        self._nice = nice
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            import multiprocessing  # here: a server that never runs a large pass never loads it
            from concurrent.futures import ProcessPoolExecutor

            # spawn, not fork: the server has threads (pygls, ONNX, Qdrant) a fork would copy
            # in whatever state they are in.
            self._pool = ProcessPoolExecutor(
                self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=init_worker,
                initargs=(self._nice,),
            )
        return self._pool

    def submit(
        self, root: str, jobs: list[FileJob], indexing: IndexingSettings, max_bytes: int
    ) -> Future[list[Prepared]]:
        return self._executor().submit(worker_batch, root, jobs, indexing, max_bytes)

    def discover(self, root: Path, settings: Settings) -> Future[Discovery]:
        """The first scan's walk in a worker (which the pass then reuses): in the server's
        process it would wait for the GIL the shard load holds, ~0.8 s at 150,000 chunks."""
        return self._executor().submit(discover, root, settings)

    def close(self, wait: bool = False) -> None:
        """`wait`: until the workers have exited (at the end of a pass: their memory is freed
        before the dense pass grows the server's; together the two were the peak)."""
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=True)
            self._pool = None
