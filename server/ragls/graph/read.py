"""Reads of the graph's rows (rows.py) for one index: what a question needs, by name or by file,
through the tables' indexes. A reader is one SQLite connection of its own (the indexer writes
through the manifest's), opened for a request and closed after it; WAL lets it read while the
indexer writes."""

from __future__ import annotations

import bisect
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ragls.graph.model import REF_KINDS, qualified

_BATCH = 500  # parameters per `IN (...)`: SQLite's limit is 32,766, a statement's cost grows with it


@dataclass(frozen=True, slots=True)
class Definition:
    path: str
    name: str
    kind: str
    scope: str
    line: int
    end_line: int
    signature: str

    @property
    def symbol(self) -> str:
        return qualified(self.name, self.scope)


@dataclass(frozen=True, slots=True)
class Use:
    path: str
    name: str
    kind: str  # call, reference, import (model.REF_KINDS)
    qualifier: str
    line: int


@dataclass(frozen=True, slots=True)
class Import:
    path: str  # the importing file
    module: str  # as written
    key: str
    line: int


_DEF_COLUMNS = "f.path, d.name, d.kind, d.scope, d.line, d.end_line, d.signature"
_USE_COLUMNS = "f.path, r.name, r.kind, r.qualifier, r.lines"
_IMPORT_COLUMNS = "f.path, i.module, i.key, i.line"
# By name: the name index, then the row's file.
_DEF = f"SELECT {_DEF_COLUMNS} FROM graph_defs d JOIN graph_files f ON f.id = d.file"
_USE = f"SELECT {_USE_COLUMNS} FROM graph_refs r JOIN graph_files f ON f.id = r.file"
_IMPORT = f"SELECT {_IMPORT_COLUMNS} FROM graph_imports i JOIN graph_files f ON f.id = i.file"
# By file: the file's rowid range of the table (rows.py).
_DEF_IN = f"SELECT {_DEF_COLUMNS} FROM graph_files f JOIN graph_defs d ON d.rowid BETWEEN f.defs_from AND f.defs_to"
_USE_IN = f"SELECT {_USE_COLUMNS} FROM graph_files f JOIN graph_refs r ON r.rowid BETWEEN f.refs_from AND f.refs_to"
_IMPORT_IN = f"SELECT {_IMPORT_COLUMNS} FROM graph_files f JOIN graph_imports i ON i.rowid BETWEEN f.imports_from AND f.imports_to"


def _batches(items: Iterable[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    for item in items:
        batch.append(item)
        if len(batch) == _BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _uses(row: tuple[str, str, int, str, str]) -> list[Use]:
    """A stored row (one name, kind and qualifier in a file, at several lines) as its uses."""
    kind = REF_KINDS[row[2]] if 0 <= row[2] < len(REF_KINDS) else REF_KINDS[1]
    return [Use(row[0], row[1], kind, row[3], int(line)) for line in row[4].split()]


class GraphReader:
    def __init__(self, manifest: Path) -> None:
        self._db = sqlite3.connect(str(manifest), timeout=5, check_same_thread=False)
        self._db.execute("PRAGMA query_only = ON")  # reads only: the indexer is the one writer

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> GraphReader:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- by name -------------------------------------------------------------------------------
    def definitions(self, name: str, limit: int = 1_000) -> list[Definition]:
        rows = self._db.execute(f"{_DEF} WHERE d.name = ? LIMIT ?", (name, limit)).fetchall()
        return [Definition(*r) for r in rows]

    def definitions_named(self, names: Iterable[str]) -> list[Definition]:
        out: list[Definition] = []
        for batch in _batches(names):
            out += [Definition(*r) for r in self._db.execute(f"{_DEF} WHERE d.name IN ({_marks(len(batch))})", batch)]
        return out

    def uses(self, names: Iterable[str], limit: int) -> list[Use]:
        """Uses of these names, at most `limit` (in storage order: whole files at a time)."""
        out: list[Use] = []
        for batch in _batches(names):
            for row in self._db.execute(f"{_USE} WHERE r.name IN ({_marks(len(batch))})", batch):
                out += _uses(row)
                if len(out) >= limit:
                    return out[:limit]
        return out

    # -- by file -------------------------------------------------------------------------------
    def definitions_in(self, paths: Iterable[str]) -> dict[str, list[Definition]]:
        """Each file's definitions, in line order."""
        out: dict[str, list[Definition]] = {}
        for batch in _batches(paths):
            for r in self._db.execute(f"{_DEF_IN} WHERE f.path IN ({_marks(len(batch))}) ORDER BY d.line", batch):
                out.setdefault(r[0], []).append(Definition(*r))
        return out

    def uses_in(self, path: str, first: int, last: int) -> list[Use]:
        """A file's uses between two lines, in line order."""
        out = [u for row in self._db.execute(f"{_USE_IN} WHERE f.path = ?", (path,)) for u in _uses(row)]
        return sorted((u for u in out if first <= u.line <= last), key=lambda u: (u.line, u.name))

    def imports_of(self, paths: Iterable[str]) -> dict[str, list[Import]]:
        out: dict[str, list[Import]] = {}
        for batch in _batches(paths):
            for r in self._db.execute(f"{_IMPORT_IN} WHERE f.path IN ({_marks(len(batch))})", batch):
                out.setdefault(r[0], []).append(Import(*r))
        return out

    def imports_mentioning(self, words: Iterable[str], limit: int) -> list[Import]:
        """Imports whose key holds one of these words (a file's stem, its folder's name): the
        candidates for importing that file, checked by resolve.py."""
        out: list[Import] = []
        for word in words:
            rows = self._db.execute(f"{_IMPORT} WHERE instr(i.key, ?) > 0 LIMIT ?", (word, limit - len(out)))
            out += [Import(*r) for r in rows]
            if len(out) >= limit:
                break
        return out

    def files(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT path FROM graph_files")]

    def files_version(self) -> tuple[int, int]:
        """Changes whenever a file gains or loses its rows: ids are never reused (rows.py)."""
        count, last = self._db.execute("SELECT COUNT(*), COALESCE(MAX(id), 0) FROM graph_files").fetchone()
        return count, last

    def has_file(self, path: str) -> bool:
        return self._db.execute("SELECT 1 FROM graph_files WHERE path = ?", (path,)).fetchone() is not None

    # -- the whole index, aggregated (repo_map.py) ---------------------------------------------
    def all_imports(self) -> Iterator[Import]:
        for r in self._db.execute(_IMPORT):
            yield Import(*r)

    def use_counts(self, max_definers: int) -> Iterator[tuple[str, str, int]]:
        """(file, name, uses) for the names used outside imports and defined somewhere, in at most
        `max_definers` files (a name defined everywhere, `get`, says nothing of who uses whom)."""
        yield from self._db.execute(
            "WITH named AS (SELECT name FROM graph_defs GROUP BY name HAVING COUNT(DISTINCT file) <= ?)"
            " SELECT f.path, r.name, SUM(r.uses) FROM graph_refs r JOIN named n ON n.name = r.name"
            " JOIN graph_files f ON f.id = r.file WHERE r.kind != ? GROUP BY r.file, r.name",
            (max_definers, REF_KINDS.index("import")),
        )

    def definers(self, max_definers: int) -> Iterator[tuple[str, str]]:
        """(name, file) for every name defined in at most `max_definers` files."""
        yield from self._db.execute(
            "WITH named AS (SELECT name FROM graph_defs GROUP BY name HAVING COUNT(DISTINCT file) <= ?)"
            " SELECT DISTINCT d.name, f.path FROM graph_defs d JOIN named n ON n.name = d.name"
            " JOIN graph_files f ON f.id = d.file",
            (max_definers,),
        )


class Enclosing:
    """Which definition of a file holds a line: the innermost, i.e. the one that starts last
    (on one line, the shorter). `defs` in line order (definitions_in)."""

    def __init__(self, defs: list[Definition]) -> None:
        self.defs = sorted(defs, key=lambda d: (d.line, -d.end_line))
        self.starts = [d.line for d in self.defs]

    def at(self, line: int) -> Definition | None:
        for i in range(bisect.bisect_right(self.starts, line) - 1, -1, -1):
            if self.defs[i].end_line >= line:
                return self.defs[i]
        return None
