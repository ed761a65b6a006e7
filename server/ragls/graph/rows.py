"""The graph's tables in the index's manifest (SQLite, store/manifest.py): rows per file, so a
saved file replaces only its own rows, in the transaction that commits its manifest record (a
crash leaves both or neither). Queries read them back through indexes on names (read.py);
nothing keeps the graph of a whole repository in memory.

A file's rows of each table are inserted together with consecutive rowids, and `graph_files`
keeps each file's rowid ranges: reading or deleting a file's rows is a range of the table's own
key, with no index on the file to maintain (those indexes were a seventh of the graph's pages
and of its insert time). File ids are never reused (AUTOINCREMENT), so the count and the largest
id say whether the set of files changed (read.files_version)."""

from __future__ import annotations

import sqlite3

from ragls.graph.model import FileGraph

SCHEMA = """
CREATE TABLE IF NOT EXISTS graph_files (
    id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT UNIQUE NOT NULL,
    defs_from INTEGER, defs_to INTEGER, refs_from INTEGER, refs_to INTEGER,
    imports_from INTEGER, imports_to INTEGER);
CREATE TABLE IF NOT EXISTS graph_defs (
    file INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL, scope TEXT NOT NULL,
    line INTEGER NOT NULL, end_line INTEGER NOT NULL, signature TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS graph_defs_name ON graph_defs (name);
CREATE TABLE IF NOT EXISTS graph_refs (
    file INTEGER NOT NULL, name TEXT NOT NULL, kind INTEGER NOT NULL, qualifier TEXT NOT NULL,
    lines TEXT NOT NULL, uses INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS graph_refs_name ON graph_refs (name);
CREATE TABLE IF NOT EXISTS graph_imports (
    file INTEGER NOT NULL, module TEXT NOT NULL, key TEXT NOT NULL, line INTEGER NOT NULL);
"""

# table -> its range columns in graph_files
_RANGES = {"graph_defs": "defs", "graph_refs": "refs", "graph_imports": "imports"}


def _columns_of(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def create(db: sqlite3.Connection) -> None:
    """The tables, made afresh when a manifest holds them in another layout (a GRAPH_FORMAT
    that changed them: that format's files are all prepared again anyway, index/apply.py)."""
    expected = {table: _columns_of_schema(table) for table in ("graph_files", *_RANGES)}
    if any((found := _columns_of(db, t)) and found != cols for t, cols in expected.items()):
        db.executescript("".join(f"DROP TABLE IF EXISTS {t};" for t in expected))
    db.executescript(SCHEMA)


def _columns_of_schema(table: str) -> list[str]:
    probe = sqlite3.connect(":memory:")
    try:
        probe.executescript(SCHEMA)
        return _columns_of(probe, table)
    finally:
        probe.close()


def _forget(db: sqlite3.Connection, paths: list[str]) -> None:
    """Delete the files' rows of every table (their graph_files rows stay)."""
    for table, col in _RANGES.items():
        ranges = [
            row
            for p in paths
            if (row := db.execute(f"SELECT {col}_from, {col}_to FROM graph_files WHERE path=?", (p,)).fetchone())
            and row[0] is not None
        ]
        db.executemany(f"DELETE FROM {table} WHERE rowid BETWEEN ? AND ?", ranges)


def replace(db: sqlite3.Connection, graphs: dict[str, FileGraph | None]) -> None:
    """Each file's rows become its new graph's (none for None). Inside the caller's transaction."""
    _forget(db, list(graphs))
    kept = {p: g for p, g in graphs.items() if g is not None and (g.defs or g.refs or g.imports)}
    db.executemany("DELETE FROM graph_files WHERE path=?", [(p,) for p in graphs if p not in kept])
    if not kept:
        return
    ids: dict[str, int] = {}
    for path in kept:
        db.execute("INSERT OR IGNORE INTO graph_files (path) VALUES (?)", (path,))
        (ids[path],) = db.execute("SELECT id FROM graph_files WHERE path=?", (path,)).fetchone()
    spans: dict[str, list[int | None]] = {p: [] for p in kept}
    for table, rows_of in (
        ("graph_defs", lambda g: g.defs),
        ("graph_refs", lambda g: [(*r, r[3].count(" ") + 1) for r in g.refs]),
        ("graph_imports", lambda g: g.imports),
    ):
        (last,) = db.execute(f"SELECT COALESCE(MAX(rowid), 0) FROM {table}").fetchone()
        batch: list[tuple[object, ...]] = []
        for path, graph in kept.items():
            rows = rows_of(graph)
            first = last + 1
            batch += [(last := last + 1, ids[path], *row) for row in rows]
            spans[path] += [first, last] if rows else [None, None]
        columns = f"rowid, {_columns(table)}"
        marks = ", ".join("?" * (columns.count(",") + 1))
        db.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", batch)
    db.executemany(
        "UPDATE graph_files SET defs_from=?, defs_to=?, refs_from=?, refs_to=?, imports_from=?, imports_to=?"
        " WHERE id=?",
        [(*spans[p], ids[p]) for p in kept],
    )


def _columns(table: str) -> str:
    return {
        "graph_defs": "file, name, kind, scope, line, end_line, signature",
        "graph_refs": "file, name, kind, qualifier, lines, uses",
        "graph_imports": "file, module, key, line",
    }[table]


def remove(db: sqlite3.Connection, paths: list[str]) -> None:
    _forget(db, paths)
    db.executemany("DELETE FROM graph_files WHERE path=?", [(p,) for p in paths])


def clear(db: sqlite3.Connection) -> None:
    for table in (*_RANGES, "graph_files"):
        db.execute(f"DELETE FROM {table}")
