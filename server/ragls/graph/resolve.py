"""Resolution by name and import scope, not a type checker. A use of a name resolves to the
definitions of that name in the index: one definition is the answer; several are ranked by
where they are seen from the use: its own file, then a file it imports, then its folder, then
anywhere else; within a tier, a definition whose type, file or folder is what the use was
reached through (`geo` in `geo.Distance()`, `Ring` in `Ring::new()`) goes first, then code
before tests, then the nearer path. The best-ranked ones (ties included: an ambiguous name
stays ambiguous) are what the use resolves to.

Imports resolve to files by their key (imports.py) matched against the index's paths
(`PathIndex`): the longest suffix of the key that names a file (its path without extension,
or a package's `__init__`/`index`/`mod` file) or a folder (a Go or Java package)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ragls.graph.read import Definition, GraphReader
from ragls.text.languages import language_of
from ragls.text.path_kinds import is_test_path

SAME_FILE, IMPORTED, SAME_FOLDER, ELSEWHERE = 0, 1, 2, 3
TIERS = ("same file", "imported", "same folder", "elsewhere")

# A package's own module file: importing the folder imports it.
_PACKAGE_FILES = frozenset({"__init__", "index", "mod", "lib", "package-info"})
_FOLDER_MAX = 200  # files of one folder an import may stand for; more is no package
_FILE_MAX = 50  # files one key may name (the same module in several places)
_QUALIFIER_SPLIT = re.compile(r"\.|::|->|\\|#")
_SELF = frozenset({"self", "this", "$this", "super", "static", "cls", "parent", "base"})
# Objects and modules of the languages' own runtimes: `JSON.parse`, `Object.create`,
# `os.getcwd`, `strings.Split` reach no project definition (unless the project defines a type of
# that name: `_names_it`). Lowercased, as `_qualifier_word` gives them; none is a usual name of a
# local variable (`path`, `map`, `time` are, and hold project objects too).
_RUNTIME = frozenset(
    """
json object array math promise reflect symbol console window document intl regexp navigator
globalthis os sys subprocess itertools functools collections typing logging shutil fmt strings
strconv errors filepath ioutil std
""".split()
)
# C++'s standard types, for uses in C and C++ files: `std::vector<Node*>::const_iterator` and
# `numeric_limits<T>::max` reach no project definition (unless the project's own type of that
# name is what the use names: `_names_it`).
_CPP_STD = frozenset(
    """
vector string map set unordered_map unordered_set multimap deque list array pair tuple shared_ptr
unique_ptr weak_ptr optional basic_string string_view numeric_limits allocator char_traits
""".split()
)
# Languages where a file sees only what it includes: a member reached through an object from a
# file that neither is nor includes the member's file is another type's (`x.size()` beside
# `StringPiece::size` in ninja's one flat folder is a std::string's, mostly), where elsewhere a
# file's own folder is its package (Go) or a likely neighbour.
_INCLUDES_ONLY = frozenset({"c", "cpp"})


def _stem_path(path: str) -> str:
    head, _, last = path.lower().rpartition("/")
    stem = last.split(".", 1)[0] if not last.startswith(".") else last
    return f"{head}/{stem}" if head else stem


class PathIndex:
    """The index's files by every suffix of their path (without extension) and of their folder,
    lowercase: what an import key can match. Built from paths alone, so it is kept per index
    and rebuilt when the index changes."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.files: dict[str, list[str]] = {}
        self.folders: dict[str, list[str]] = {}
        for path in paths:
            segments = _stem_path(path).split("/")
            for i in range(len(segments)):
                self.files.setdefault("/".join(segments[i:]), []).append(path)
            folder = segments[:-1]
            if segments[-1] in _PACKAGE_FILES:
                for i in range(len(folder)):
                    self.files.setdefault("/".join(folder[i:]), []).append(path)
            for i in range(len(folder)):
                self.folders.setdefault("/".join(folder[i:]), []).append(path)

    def resolve(self, key: str) -> list[str]:
        """The files an import key names (longest match first; [] when none: a dependency)."""
        if not key:
            return []
        segments = key.split("/")
        n = len(segments)
        # Whole key first; then without its last segment (`use crate::geo::distance` names an
        # item of geo.rs, a static import a member of its class). A single segment matches a
        # file only when the key is that one segment (`os.path` is no local `path.py`), a
        # folder always (a Go package's folder at the repository's root).
        for tail in (0, 1) if n > 1 else (0,):
            head = segments[: n - tail]
            for start in range(len(head)):
                width = len(head) - start
                key_part = "/".join(head[start:])
                files = self.files.get(key_part)
                if files and (width >= 2 or n == 1):
                    return files[:_FILE_MAX]
                folder = self.folders.get(key_part) if tail == 0 else None
                if folder and len(folder) <= _FOLDER_MAX:
                    return folder
        return []


@dataclass(frozen=True, slots=True)
class Ranked:
    definition: Definition
    tier: int
    qualified: bool  # the use's qualifier names the definition's type, file or folder

    @property
    def key(self) -> tuple[int, int]:
        return self.tier, 0 if self.qualified else 1


def _qualifier_word(qualifier: str) -> str:
    # Template arguments are not part of the name: `vector<Node*>` is `vector`.
    word = _QUALIFIER_SPLIT.split(qualifier.strip())[-1].split("<", 1)[0].strip().lower() if qualifier else ""
    return "" if word in _SELF else word


def _names_it(word: str, d: Definition) -> bool:
    """Whether a qualifier's last word is the definition's type, file or folder."""
    if not word:
        return False
    parts = _stem_path(d.path).split("/")
    folder = parts[-2] if len(parts) > 1 else ""
    return word in (d.scope.rsplit(".", 1)[-1].lower(), parts[-1], folder)


class Resolver:
    """Ranks candidate definitions as seen from a file, reading the files' imports as needed
    (in batches: `load`)."""

    def __init__(self, reader: GraphReader, paths: PathIndex) -> None:
        self.reader = reader
        self.paths = paths
        self._imported: dict[str, frozenset[str]] = {}
        # Resolutions by (name, file, qualifier word): a question resolves thousands of uses,
        # most of them the same name from the same file; a name may have a thousand definitions.
        self._best: dict[tuple[str, str, str], list[Definition]] = {}

    def load(self, files: Iterable[str]) -> None:
        """Read the imports of these files at once (one query per 500)."""
        todo = [f for f in set(files) if f not in self._imported]
        found = self.reader.imports_of(todo)
        for f in todo:
            self._imported[f] = frozenset(p for i in found.get(f, ()) for p in self.paths.resolve(i.key))

    def imported(self, path: str) -> frozenset[str]:
        if path not in self._imported:
            self.load([path])
        return self._imported[path]

    def tier(self, d: Definition, from_path: str) -> int:
        if d.path == from_path:
            return SAME_FILE
        if d.path in self.imported(from_path):
            return IMPORTED
        if posixpath.dirname(d.path) == posixpath.dirname(from_path):
            return SAME_FOLDER
        return ELSEWHERE

    def rank(self, candidates: list[Definition], from_path: str | None, qualifier: str = "") -> list[Ranked]:
        """Every candidate, best first, as seen from `from_path` (None: from nowhere in
        particular: code before tests, then by path)."""
        word = _qualifier_word(qualifier)
        ranked = [
            Ranked(d, self.tier(d, from_path) if from_path is not None else ELSEWHERE, _names_it(word, d))
            for d in candidates
        ]

        def order(r: Ranked) -> tuple[int, int, int, int, str, int]:
            near = len(posixpath.commonpath([r.definition.path, from_path])) if from_path else 0
            return (*r.key, int(is_test_path(r.definition.path)), -near, r.definition.path, r.definition.line)

        return sorted(ranked, key=order)

    def best(self, candidates: list[Definition], from_path: str, qualifier: str = "") -> list[Definition]:
        """What a use in `from_path` resolves to: the candidates of the best rank (several when
        the name stays ambiguous there; none for a member reached through an object from a file
        that neither is, imports nor sits beside the member's file and does not name its type:
        `x.create()` far from `Ky.create` is mostly another type's `create`, a builtin's or a
        dependency's, which no project file defines). `candidates`: every definition of one
        name (the same list for a name throughout a question). A name reached through a runtime
        object (`JSON.parse`, `os.path.join`) resolves to nothing in the project."""
        if not candidates:
            return candidates
        word = _qualifier_word(qualifier)
        key = (candidates[0].name, from_path, word)
        found = self._best.get(key)
        if found is None:
            ranked = self.rank(candidates, from_path, qualifier)
            includes_only = language_of(from_path) in _INCLUDES_ONLY
            if word in _RUNTIME or (includes_only and word in _CPP_STD):
                ranked = [r for r in ranked if r.qualified]
            elif word:
                limit = SAME_FOLDER if includes_only else ELSEWHERE
                ranked = [r for r in ranked if r.tier < limit or r.qualified or not r.definition.scope]
            top = ranked[0].key if ranked else None
            found = self._best[key] = [r.definition for r in ranked if r.key == top]
        return found
