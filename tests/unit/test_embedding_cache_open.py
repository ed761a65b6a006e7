"""Every folder of a multi-root workspace opens the one embedding cache as its index starts: at
the same moment, on a fresh file, SQLite answered "database is locked" at once to some of them
(switching to WAL) and their index went to `error` (seen in the VS Code multi-root e2e)."""

from __future__ import annotations

import threading
from pathlib import Path

from ragls.embedding.cache import EmbeddingCache


def test_many_indexes_open_a_fresh_cache_at_once(tmp_path: Path) -> None:
    errors: list[str] = []
    for round_ in range(60):
        path = tmp_path / f"r{round_}" / "embeddings.sqlite"
        path.parent.mkdir()
        start = threading.Barrier(8)

        def open_it(path: Path = path, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                EmbeddingCache(path, "model", 4)
            except Exception as exc:
                errors.append(repr(exc))

        threads = [threading.Thread(target=open_it) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
