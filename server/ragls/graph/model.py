"""A file's graph facts, as the chunker's parse yields them and the manifest stores them: its
definitions, the names it uses (calls, other references, imported names) and its imports.

Plain tuples, not objects: a prepared file crosses the process boundary pickled (ingest/prepare.py),
and tuples of strings and ints are the cheapest thing to pickle and to hand to SQLite."""

from __future__ import annotations

from dataclasses import dataclass, field

# Bump when what extract.py reads from a file changes: an index made before prepares every file
# again once (index/apply.py), so its rows are the new reading's.
GRAPH_FORMAT = "4"  # 2: default imports and re-exports (JS, TS); 3, 4: names used as values (Python, C, C++)

# Reference kinds, as the protocol names them; stored as their index in REF_KINDS.
CALL, REFERENCE, IMPORT = "call", "reference", "import"
REF_KINDS = (CALL, REFERENCE, IMPORT)

# Definition kinds that name a scope: definitions inside them are qualified by their name
# (`Ring.push`), and a function directly inside one of the type-like kinds is a method.
TYPE_KINDS = frozenset({"class", "interface", "struct", "enum", "trait", "impl"})
SCOPE_KINDS = TYPE_KINDS | {"module"}

# (name, kind, scope, line, end_line, signature): `scope` is the enclosing types and modules,
# dotted ("acme.Ring"; "" at the top); lines are 1-based and inclusive.
DefRow = tuple[str, str, str, int, int, str]
# (name, kind index in REF_KINDS, qualifier, lines): a file's uses of a name of one kind through
# one qualifier, at these lines ("12 40 41", ascending). `qualifier` is what the name was reached
# through (`r` in `r.push()`, `geo` in `geo.Distance`), "" when it stands alone. One row per
# group, not per use: a file uses the same names again and again (2.3 uses per row measured on
# 1,645 files of site-packages), and every row costs its index entries in SQLite.
RefRow = tuple[str, int, str, str]
# (module as written, key, line): `key` is the module as a lowercase path ("billing/invoice",
# "web/src/debounce" for a relative import), matched against the workspace's file paths.
ImportRow = tuple[str, str, int]


@dataclass(slots=True)
class FileGraph:
    defs: list[DefRow] = field(default_factory=list)
    refs: list[RefRow] = field(default_factory=list)
    imports: list[ImportRow] = field(default_factory=list)
    truncated: bool = False  # a budget was reached: the rest of the file was not read


def qualified(name: str, scope: str) -> str:
    return f"{scope}.{name}" if scope else name
