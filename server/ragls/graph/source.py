"""An index's graph as a question opens it: a reader of its own (read.py) over the manifest, and
the index's file paths for import resolution (resolve.PathIndex), kept while the set of files
with graph rows stays the same (read.files_version) instead of being read for every question."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ragls.graph.read import GraphReader
from ragls.graph.relations import Graph
from ragls.graph.repo_map import file_ranking
from ragls.graph.resolve import PathIndex


class GraphSource:
    def __init__(self, manifest: Callable[[], Path | None]) -> None:
        self._manifest = manifest
        self._lock = threading.Lock()
        self._paths: tuple[tuple[int, int], float, PathIndex] | None = None

    @contextmanager
    def open(self, stale_s: float = 0.0) -> Iterator[Graph]:
        """The graph for one question; LookupError when the index has no manifest open.
        `stale_s`: the file paths (import resolution) may be that many seconds old. While a
        pass indexes, the files change with every batch, and reading 10,000 paths again costs
        ~45 ms per question: an answer's context signatures (graph_context) take the last ones,
        a question about the graph itself (references, related) the current ones."""
        manifest = self._manifest()
        if manifest is None:
            raise LookupError("the index is not open")
        with GraphReader(manifest) as reader:
            yield Graph(reader, self._path_index(reader, stale_s))

    def rank_files(self, seeds: dict[str, float], named: set[str], n: int) -> list[str]:
        """repo_map.file_ranking over the index's graph; [] when there is none to read (a
        ranking signal must never fail a question)."""
        try:
            with self.open() as g:
                return file_ranking(g.reader, g.resolver.paths, seeds, named, n)
        except (LookupError, sqlite3.Error):
            return []

    def _path_index(self, reader: GraphReader, stale_s: float = 0.0) -> PathIndex:
        now = time.monotonic()
        with self._lock:
            cached = self._paths
            if cached is not None and now - cached[1] < stale_s:
                return cached[2]
        version = reader.files_version()
        if cached is not None and cached[0] == version:
            return cached[2]
        paths = PathIndex(reader.files())
        with self._lock:
            self._paths = (version, now, paths)
        return paths
