"""Persistent embedding cache keyed by (model id, dimension, chunk text hash), shared by
every workspace: a branch switch, a revert or a copied project never re-embeds."""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ragls.private import private_file

if TYPE_CHECKING:
    import numpy as np


class EmbeddingCache:
    def __init__(self, path: Path, model_id: str, dimension: int) -> None:
        private_file(path)  # 0600 in a 0700 folder, whatever the umask (private.py)
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        self._setup()
        self._prefix = f"{model_id}|{dimension}|"
        self._dim = dimension
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def _setup(self) -> None:
        """WAL mode and the table. Every folder of a multi-root workspace opens this one file as
        its index starts, at the same moment: switching the journal mode takes an exclusive lock,
        and SQLite answers "database is locked" at once, without waiting out the busy timeout,
        when two connections would otherwise deadlock. So the setup is retried for a while."""
        for attempt in range(60):
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")
                return
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) or attempt == 59:
                    raise
                time.sleep(0.05 + random.random() * 0.2)  # apart, so that one of them goes first

    def get_many(self, hashes: list[str], count: bool = True) -> dict[str, np.ndarray]:
        """`count`: into the hit rate the status reports (the indexer's lookups; a query's name
        vector lookups are not)."""
        import numpy as np  # here, not at import: the server answers `initialize` first

        found: dict[str, np.ndarray] = {}
        keys = [self._prefix + h for h in hashes]
        with self._lock:
            for i in range(0, len(keys), 500):
                part = keys[i : i + 500]
                q = f"SELECT key, vec FROM emb WHERE key IN ({','.join('?' * len(part))})"
                for key, blob in self._db.execute(q, part):
                    v = np.frombuffer(blob, dtype=np.float32)
                    if v.shape[0] == self._dim:
                        found[key[len(self._prefix) :]] = v
        if count:
            self.hits += len(found)
            self.misses += len(set(hashes)) - len(found)
        return found

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        import numpy as np

        rows = [(self._prefix + h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items.items()]
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO emb (key, vec) VALUES (?, ?)", rows)

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    def close(self) -> None:
        with self._lock:
            self._db.close()
