"""Persistent embedding cache keyed by (model id, dimension, chunk text hash), shared by
every workspace: a branch switch, a revert or a copied project never re-embeds.

Two kinds of vector live here, apart (issue 51: a lying snapshot must not reach the user's
ranking):
- `emb`: vectors this machine's embedder computed from the chunk's text. They are right by
  construction, and every workspace takes them.
- `snap`: vectors an imported snapshot brought (embedding/snapshot_source.py), each row with the
  snapshot it came from (`snapshots`). A snapshot never writes into `emb`, so it can never replace
  a computed vector; a computed vector always wins over a snapshot's on reading, and replaces it
  on writing, after the two were compared: a snapshot whose vector disagrees with the model's is
  distrusted whole, its rows deleted and its record kept (so the same file is refused again).
  Rows of a snapshot still being imported, or distrusted, are never read.
  `uses` records which files of which index took a snapshot's vectors, so that every index
  that used a snapshot later distrusted embeds those files again (index/backfill.py).
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragls.private import private_file

if TYPE_CHECKING:
    import numpy as np

# Cosine below which a snapshot's vector is a lie about its chunk. The same model on the same
# text gives >= 0.972 (CPU against GPU; two CPU runs that batch the texts differently: >= 0.987,
# name vectors >= 0.979), while the nearest *other* chunk of a real codebase is below 0.9 for 99 %
# of chunks (server/ragls, 600 chunks: median 0.60, p99 0.88, max 0.92). So a vector that passes
# ranks its chunk about as the truth would; one that belongs to another chunk does not pass.
AGREE = 0.9

_SELECT_PART = 500  # keys per SELECT ... IN (...): under SQLite's variable limit
_DELETE_ROWS = 20_000  # rows per DELETE of a distrusted snapshot: other writers wait at most one


@dataclass(frozen=True)
class Distrusted:
    """A snapshot found lying: its id, where it came from and why."""

    snapshot: int
    source: str
    reason: str


@dataclass(frozen=True)
class SnapshotVector:
    """A vector a trusted snapshot holds for a chunk, and which snapshot."""

    vector: np.ndarray
    snapshot: int


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    import numpy as np

    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(np.dot(a, b)) / (na * nb) if na > 0 and nb > 0 else 0.0


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
        # Snapshots this object distrusted (a model vector disagreed), for its index to report.
        self._caught: list[Distrusted] = []

    def _setup(self) -> None:
        """WAL mode and the tables. Every folder of a multi-root workspace opens this one file as
        its index starts, at the same moment: switching the journal mode takes an exclusive lock,
        and SQLite answers "database is locked" at once, without waiting out the busy timeout,
        when two connections would otherwise deadlock. So the setup is retried for a while."""
        for attempt in range(60):
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                with self._db:
                    self._db.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")
                    self._db.execute(
                        "CREATE TABLE IF NOT EXISTS snapshots (id INTEGER PRIMARY KEY, content TEXT UNIQUE NOT NULL,"
                        " source TEXT NOT NULL, state TEXT NOT NULL, vectors INTEGER NOT NULL, reason TEXT,"
                        " at REAL NOT NULL)"
                    )
                    self._db.execute(
                        "CREATE TABLE IF NOT EXISTS snap (key TEXT PRIMARY KEY, vec BLOB NOT NULL,"
                        " snapshot INTEGER NOT NULL)"
                    )
                    self._db.execute("CREATE INDEX IF NOT EXISTS snap_by_snapshot ON snap (snapshot)")
                    self._db.execute(
                        "CREATE TABLE IF NOT EXISTS uses (idx TEXT NOT NULL, snapshot INTEGER NOT NULL,"
                        " path TEXT NOT NULL, PRIMARY KEY (idx, snapshot, path))"
                    )
                return
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) or attempt == 59:
                    raise
                time.sleep(0.05 + random.random() * 0.2)  # apart, so that one of them goes first

    # -- reading ---------------------------------------------------------------------------------
    def _rows(self, sql: str, keys: list[str]) -> Iterable[tuple[str, bytes, int]]:
        """`sql`'s rows for `keys`, a part at a time; `{keys}` in `sql` is the placeholder list."""
        for i in range(0, len(keys), _SELECT_PART):
            part = keys[i : i + _SELECT_PART]
            yield from self._db.execute(sql.format(keys=",".join("?" * len(part))), part)

    def _vectors(self, rows: Iterable[tuple[str, bytes, int]]) -> dict[str, tuple[np.ndarray, int]]:
        import numpy as np  # here, not at import: the server answers `initialize` first

        out: dict[str, tuple[np.ndarray, int]] = {}
        for key, blob, snapshot in rows:
            v = np.frombuffer(blob, dtype=np.float32)
            if v.shape[0] == self._dim:
                out[key[len(self._prefix) :]] = (v, snapshot)
        return out

    def _own(self, keys: list[str]) -> dict[str, tuple[np.ndarray, int]]:
        return self._vectors(self._rows("SELECT key, vec, 0 FROM emb WHERE key IN ({keys})", keys))

    def _from_snapshots(self, keys: list[str]) -> dict[str, tuple[np.ndarray, int]]:
        return self._vectors(
            self._rows(
                "SELECT s.key, s.vec, s.snapshot FROM snap s JOIN snapshots p ON p.id = s.snapshot"
                " WHERE p.state = 'trusted' AND s.key IN ({keys})",
                keys,
            )
        )

    def get_own(self, hashes: list[str], count: bool = True) -> dict[str, np.ndarray]:
        """The vectors this machine's embedder computed (never a snapshot's)."""
        with self._lock:
            found = {h: v for h, (v, _) in self._own([self._prefix + h for h in hashes]).items()}
        self._count(hashes, found, count)
        return found

    def get_snapshot(self, hashes: list[str]) -> dict[str, SnapshotVector]:
        """The vectors trusted snapshots hold for `hashes` that this machine did not compute."""
        keys = [self._prefix + h for h in hashes]
        with self._lock:
            own = self._own(keys)
            found = self._from_snapshots([k for k in keys if k[len(self._prefix) :] not in own])
        return {h: SnapshotVector(v, s) for h, (v, s) in found.items()}

    def get_many(self, hashes: list[str], count: bool = True) -> dict[str, np.ndarray]:
        """Computed vectors, else a trusted snapshot's (the name rerank, `snapshot export`).
        `count`: into the hit rate the status reports (the indexer's lookups; a query's name
        vector lookups are not)."""
        keys = [self._prefix + h for h in hashes]
        with self._lock:
            found = {h: v for h, (v, _) in self._own(keys).items()}
            rest = [k for k in keys if k[len(self._prefix) :] not in found]
            found.update((h, v) for h, (v, _) in self._from_snapshots(rest).items())
        self._count(hashes, found, count)
        return found

    def _count(self, hashes: list[str], found: dict[str, np.ndarray], count: bool) -> None:
        if count:
            self.hits += len(found)
            self.misses += len(set(hashes)) - len(found)

    # -- computed vectors --------------------------------------------------------------------------
    def put_many(self, items: dict[str, np.ndarray]) -> None:
        """Vectors the embedder computed. A snapshot's row for the same chunk is compared first
        (a free check of the snapshot: it disagrees, it is distrusted), then replaced."""
        if not items:
            return
        import numpy as np

        vecs = {self._prefix + h: np.asarray(v, dtype=np.float32) for h, v in items.items()}
        rows = [(k, v.tobytes()) for k, v in vecs.items()]
        with self._lock:
            theirs = list(self._rows("SELECT key, vec, snapshot FROM snap WHERE key IN ({keys})", list(vecs)))
            liars: dict[int, float] = {}
            for key, blob, snapshot in theirs:
                agree = cosine(vecs[key], np.frombuffer(blob, dtype=np.float32))
                if agree < AGREE:
                    liars[snapshot] = min(agree, liars.get(snapshot, 1.0))
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO emb (key, vec) VALUES (?, ?)", rows)
                if theirs:
                    self._db.executemany("DELETE FROM snap WHERE key = ?", [(k,) for k, _, _ in theirs])
        for snapshot, agree in liars.items():
            reason = (
                f"a vector it holds disagrees with the one this machine's model computed for the same chunk "
                f"(cosine {agree:.2f} < {AGREE})"
            )
            if (caught := self.distrust(snapshot, reason)) is not None:
                self._caught.append(caught)

    def caught(self) -> list[Distrusted]:
        """The snapshots this object distrusted since the last call."""
        with self._lock:
            out, self._caught = self._caught, []
        return out

    # -- snapshots: provenance -----------------------------------------------------------------
    def begin_snapshot(self, content: str, source: str, vectors: int) -> tuple[int, str, str | None]:
        """The record of a snapshot's content (identity and checksum): (id, state, reason). A new
        one, or one a crash left `importing`, is (re)started empty; `trusted` and `distrusted` are
        returned as they are (imported before; refused before)."""
        with self._lock:
            row = self._db.execute("SELECT id, state, reason FROM snapshots WHERE content = ?", (content,)).fetchone()
            if row is not None and row[1] in ("trusted", "distrusted"):
                return int(row[0]), str(row[1]), row[2]
        if row is not None:
            self._delete_rows(int(row[0]))
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO snapshots (content, source, state, vectors, at) VALUES (?, ?, 'importing', ?, ?)"
                " ON CONFLICT (content) DO UPDATE SET source = excluded.source, state = 'importing',"
                " vectors = excluded.vectors, at = excluded.at",
                (content, source, vectors, time.time()),
            )
            (sid,) = self._db.execute("SELECT id FROM snapshots WHERE content = ?", (content,)).fetchone()
        return int(sid), "importing", None

    def put_snapshot(self, snapshot: int, hashes: list[str], vectors: np.ndarray) -> None:
        """One batch of a snapshot being imported (invisible until `trust_snapshot`). A later
        snapshot's row replaces an earlier one's for the same chunk; `emb` is never touched."""
        flat = vectors.astype("<f4", copy=False)
        rows = [(self._prefix + h, flat[i].tobytes(), snapshot) for i, h in enumerate(hashes)]
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO snap (key, vec, snapshot) VALUES (?, ?, ?)", rows)

    def trust_snapshot(self, snapshot: int) -> bool:
        """Its rows count from now on (another process importing the same file may have said so
        first); False if it was distrusted meanwhile (a model vector disagreed with one of its
        rows) or forgotten."""
        with self._lock, self._db:
            done = self._db.execute(
                "UPDATE snapshots SET state = 'trusted' WHERE id = ? AND state != 'distrusted'", (snapshot,)
            ).rowcount
        return done == 1

    def forget_snapshot(self, snapshot: int) -> None:
        """An import that failed (the file changed, a disk error): its rows and record go, so the
        same content can be tried again."""
        self._delete_rows(snapshot)
        with self._lock, self._db:
            self._db.execute("DELETE FROM snapshots WHERE id = ?", (snapshot,))

    def distrust(self, snapshot: int, reason: str) -> Distrusted | None:
        """The snapshot lied: no vector of it is read from now on (one UPDATE), then its rows are
        deleted; its record stays, so the same file is refused again. None if it was already."""
        with self._lock, self._db:
            row = self._db.execute("SELECT source, state FROM snapshots WHERE id = ?", (snapshot,)).fetchone()
            if row is None or row[1] == "distrusted":
                return None
            self._db.execute("UPDATE snapshots SET state = 'distrusted', reason = ? WHERE id = ?", (reason, snapshot))
        self._delete_rows(snapshot)
        return Distrusted(snapshot, str(row[0]), reason)

    def snapshot_source(self, snapshot: int) -> str:
        with self._lock:
            row = self._db.execute("SELECT source FROM snapshots WHERE id = ?", (snapshot,)).fetchone()
        return str(row[0]) if row else ""

    def _delete_rows(self, snapshot: int) -> None:
        """In bounded transactions: a 500,000-row snapshot must not hold the write lock for the
        seconds that other indexes' writes would wait."""
        while True:
            with self._lock, self._db:
                gone = self._db.execute(
                    "DELETE FROM snap WHERE rowid IN (SELECT rowid FROM snap WHERE snapshot = ? LIMIT ?)",
                    (snapshot, _DELETE_ROWS),
                ).rowcount
            if gone < _DELETE_ROWS:
                return

    # -- snapshots: which index used which ------------------------------------------------------
    def record_uses(self, index: str, uses: dict[int, set[str]]) -> None:
        """These files of `index` took vectors from these snapshots."""
        rows = [(index, s, p) for s, paths in uses.items() for p in paths]
        if rows:
            with self._lock, self._db:
                self._db.executemany("INSERT OR IGNORE INTO uses (idx, snapshot, path) VALUES (?, ?, ?)", rows)

    def distrusted_uses(self, index: str) -> tuple[set[str], list[Distrusted]]:
        """The files of `index` that took vectors from a snapshot distrusted since, and those
        snapshots; forgotten once read (the caller embeds the files again)."""
        with self._lock, self._db:
            found = self._db.execute(
                "SELECT u.path, p.id, p.source, p.reason FROM uses u JOIN snapshots p ON p.id = u.snapshot"
                " WHERE u.idx = ? AND p.state = 'distrusted'",
                (index,),
            ).fetchall()
            ids = {int(sid) for _, sid, _, _ in found}
            self._db.executemany("DELETE FROM uses WHERE idx = ? AND snapshot = ?", [(index, s) for s in ids])
        paths = {str(p) for p, _, _, _ in found}
        snapshots = {int(s): Distrusted(int(s), str(src), str(why or "")) for _, s, src, why in found}
        return paths, list(snapshots.values())

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    def close(self) -> None:
        with self._lock:
            self._db.close()
