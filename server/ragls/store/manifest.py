"""Per-index manifest (SQLite): which file version each stored chunk belongs to.

Write-ahead: a file's new chunk ids are recorded as pending before they are upserted, so a
crash at any point leaves enough to remove every orphan on the next start. Files skipped for
their content (binary, minified, generated) are kept too, with the size and mtime they were
read at, so a restart does not read them again while they are unchanged."""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragls.graph import rows as graph_rows
from ragls.private import private_file

if TYPE_CHECKING:
    from ragls.graph.model import FileGraph

LEXICAL = "lexical"  # chunks stored, dense vectors still missing
DENSE = "dense"  # fully indexed
FAILED = "failed"
DELETING = "deleting"  # chunks being deleted; the next start finishes the job


@dataclass
class FileRecord:
    path: str
    hash: str
    size: int
    mtime_ns: int
    language: str
    status: str
    chunk_ids: list[str]
    pending_ids: list[str]
    error: str | None = None


@dataclass(frozen=True)
class SkippedFile:
    """A file skipped for its content, as it was when read: unchanged (same size and mtime, the
    test the scan applies to indexed files too) it is not read again."""

    size: int
    mtime_ns: int
    reason: str


def _ids(column: str | None) -> list[str]:
    # Most pending_ids are empty: skipping json for those is a tenth of a warm start's read.
    return json.loads(column) if column and column != "[]" else []


class Manifest:
    def __init__(self, path: Path) -> None:
        private_file(path)  # 0600 in a 0700 folder, whatever the umask (private.py)
        # One writer per manifest (one process per slot); a lock held longer than this is a
        # fault the indexer retries with backoff, not a reason to freeze the worker.
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=5)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, hash TEXT, size INTEGER,"
            " mtime_ns INTEGER, language TEXT, status TEXT, chunk_ids TEXT, pending_ids TEXT,"
            " error TEXT)"
        )
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS skipped (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, reason TEXT)"
        )
        graph_rows.create(self._db)  # the code graph's rows per file (ragls.graph)
        self._db.commit()
        self.path = path
        self._lock = threading.Lock()

    def all(self) -> dict[str, FileRecord]:
        with self._lock:
            rows = self._db.execute(
                "SELECT path, hash, size, mtime_ns, language, status, chunk_ids, pending_ids, error FROM files"
            ).fetchall()
        return {r[0]: FileRecord(r[0], r[1], r[2], r[3], r[4], r[5], _ids(r[6]), _ids(r[7]), r[8]) for r in rows}

    def set_pending(self, path: str, ids: list[str]) -> None:
        self.set_pending_many([(path, ids)])

    def set_pending_many(self, items: list[tuple[str, list[str]]]) -> None:
        """Write-ahead for a batch of files, in one transaction (one fsync, not one per file)."""
        with self._lock, self._db:
            for path, ids in items:
                cur = self._db.execute("UPDATE files SET pending_ids=? WHERE path=?", (json.dumps(ids), path))
                if cur.rowcount == 0:
                    self._db.execute(
                        "INSERT INTO files (path, hash, size, mtime_ns, language, status,"
                        " chunk_ids, pending_ids) VALUES (?, '', 0, 0, '', 'pending', '[]', ?)",
                        (path, json.dumps(ids)),
                    )

    def put(self, rec: FileRecord) -> None:
        self.put_many([rec])

    def put_many(self, recs: list[FileRecord], graphs: dict[str, FileGraph | None] | None = None) -> None:
        """`graphs`: the files' new graph rows (None: none), committed with their records."""
        with self._lock, self._db:
            if graphs:
                graph_rows.replace(self._db, graphs)
            self._db.executemany(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        r.path,
                        r.hash,
                        r.size,
                        r.mtime_ns,
                        r.language,
                        r.status,
                        json.dumps(r.chunk_ids),
                        json.dumps(r.pending_ids),
                        r.error,
                    )
                    for r in recs
                ],
            )

    def set_status(self, paths: list[str], status: str) -> None:
        with self._lock, self._db:
            self._db.executemany("UPDATE files SET status=? WHERE path=?", [(status, p) for p in paths])

    def remove(self, paths: list[str]) -> None:
        with self._lock, self._db:
            self._db.executemany("DELETE FROM files WHERE path=?", [(p,) for p in paths])
            graph_rows.remove(self._db, paths)

    def clear(self) -> None:
        with self._lock, self._db:
            self._db.execute("DELETE FROM files")
            graph_rows.clear(self._db)
            self._db.execute("DELETE FROM skipped")

    def skipped(self, rules: str) -> dict[str, SkippedFile]:
        """The kept skips, if they were decided by the same `rules` (e.g. the ragls version):
        other rules may decide otherwise, so those are dropped and every file read again."""
        with self._lock, self._db:
            row = self._db.execute("SELECT value FROM meta WHERE key='skip_rules'").fetchone()
            if row is None or row[0] != rules:
                self._db.execute("DELETE FROM skipped")
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('skip_rules', ?)", (rules,))
                return {}
            rows = self._db.execute("SELECT path, size, mtime_ns, reason FROM skipped").fetchall()
        return {r[0]: SkippedFile(r[1], r[2], r[3]) for r in rows}

    def set_skipped(self, items: dict[str, SkippedFile]) -> None:
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO skipped VALUES (?, ?, ?, ?)",
                [(p, s.size, s.mtime_ns, s.reason) for p, s in items.items()],
            )

    def forget_skipped(self, paths: list[str]) -> None:
        with self._lock, self._db:
            self._db.executemany("DELETE FROM skipped WHERE path=?", [(p,) for p in paths])

    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def close(self) -> None:
        with self._lock:
            self._db.close()
