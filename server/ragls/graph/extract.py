"""A parsed file's graph facts (model.FileGraph), read from the syntax tree the chunker has
already built (chunking/code.py hands it over: a file is parsed once) by the language's query
(queries.py), in one run over the tree whose captures are names.

Bounded per file whatever the file holds: the query runs over windows of the text and stops
once a budget of definitions, references or imports is reached (a generated file of 100k calls
keeps its first MAX_REFS); names and qualifiers past a length are dropped; a definition's node
is at most a few parents up from its name; scopes are nested by one sweep over sorted ranges,
never by recursion, so deep nesting costs no stack."""

from __future__ import annotations

import bisect
import posixpath
from typing import TYPE_CHECKING

from tree_sitter import Node, QueryCursor

from ragls.graph.imports import last_name, module_key, php_use_paths, rust_use_paths
from ragls.graph.model import CALL, IMPORT, REF_KINDS, REFERENCE, TYPE_KINDS, FileGraph, qualified
from ragls.graph.queries import query

if TYPE_CHECKING:
    from ragls.chunking.syntax import SyntaxReader

MAX_DEFS = 5_000
MAX_REFS = 20_000
MAX_IMPORTS = 1_000
_WINDOW = 64 * 1024  # bytes of text per query run: the budgets are checked between runs
_MATCH_LIMIT = 256  # in-progress matches the query cursor keeps (tree-sitter's own bound)
_CLIMB = 6  # parents between a definition's name and its node, at most
_NAME_BYTES = 480  # a name longer than this (120 characters of 4 bytes) is no code name
_QUALIFIER_BYTES = 80
_SIGNATURE_MAX = 200
_SCOPE_PARTS = 8  # a scope keeps its innermost names: 2,000 nested functions cost no 2,000-part names
_LINES_MAX = 1_000  # lines kept of one name's uses in a file (100k calls of one name: the first)

_CALL = REF_KINDS.index(CALL)
_REFERENCE = REF_KINDS.index(REFERENCE)
_IMPORT = REF_KINDS.index(IMPORT)
# Uses by capture: the kind, and whether the node before the name is its qualifier. Calls come
# first: a name captured as a call and as a member use (`r.push()`) is a call.
_USES = (
    ("call.member", _CALL, True),
    ("call", _CALL, False),
    ("ref.member", _REFERENCE, True),
    ("ref.field", _REFERENCE, False),
    ("ref", _REFERENCE, False),
)
# Languages whose imports name what they bring in by their last segment (`import a.b.Ring`).
_LAST_SEGMENT_NAMES = frozenset({"java", "kotlin"})


class _Def:
    __slots__ = ("end", "end_row", "explicit", "kind", "name", "row", "start")

    def __init__(self, start: int, end: int, name: str, kind: str, row: int, end_row: int) -> None:
        self.start, self.end, self.name, self.kind = start, end, name, kind
        self.row, self.end_row = row, end_row
        self.explicit = ""  # the scope its own syntax names (model: `@scope`)


class _Reader:
    """One file's captures into definitions, references and imports."""

    def __init__(self, reader: SyntaxReader) -> None:
        self.src = reader.src
        self.lines = reader.lines
        self.language = reader.language
        self.rel_dir = posixpath.dirname(reader.path)
        self.defs: dict[int, _Def] = {}  # by the start byte of the name
        self.scopes: list[tuple[int, str]] = []  # explicit scopes: (start byte, name)
        self.claimed: set[int] = set()  # start bytes of the names read (a name is one use)
        self.uses: dict[tuple[str, int, str], list[int]] = {}  # (name, kind, qualifier) -> lines
        self.imports: dict[tuple[str, int], str] = {}  # (key, line) -> module as written
        self.imported: dict[str, list[int]] = {}  # names an import brings in -> lines
        self.truncated = False

    def text(self, node: Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def name_of(self, node: Node) -> str | None:
        start, end = node.start_byte, node.end_byte
        if end - start > _NAME_BYTES or end == start:
            return None
        name = self.src[start:end].decode("utf-8", "replace")
        return name if "\n" not in name else None

    def full(self) -> bool:
        return len(self.defs) >= MAX_DEFS or len(self.claimed) >= MAX_REFS or len(self.imports) >= MAX_IMPORTS

    def read(self, root: Node) -> FileGraph:
        q = query(self.language)
        if q is None:
            return FileGraph()
        cursor = QueryCursor(q.query, match_limit=_MATCH_LIMIT)
        size = len(self.src)
        for start in range(0, max(size, 1), _WINDOW):
            cursor.set_byte_range(start, min(size, start + _WINDOW))
            self.take(cursor.captures(root), q.definition_nodes)
            if self.full():
                self.truncated = start + _WINDOW < size
                break
        return self.graph()

    def take(self, captures: dict[str, list[Node]], definition_nodes: frozenset[str]) -> None:
        for capture, nodes in captures.items():
            if capture.startswith("def.") or capture == "impl":
                kind = "impl" if capture == "impl" else capture[4:]
                for node in nodes:
                    self.definition(node, kind, definition_nodes)
            elif capture == "scope":
                for node in nodes:
                    if (name := self.name_of(node)) is not None:
                        self.scopes.append((node.start_byte, name.replace("::", ".").replace("\\", ".")))
            elif capture.startswith("import"):
                for node in nodes:
                    self.import_(node, capture)
        claimed, uses, src = self.claimed, self.uses, self.src
        for capture, kind, member in _USES:
            for node in captures.get(capture, ()):
                # The hot loop (a use per call, member and type): name_of inlined.
                at, end = node.start_byte, node.end_byte
                if at in claimed or not 1 < end - at <= _NAME_BYTES:
                    continue  # read already, or a one-letter name (a loop variable, a type parameter)
                claimed.add(at)
                name = src[at:end].decode("utf-8", "replace")
                qualifier = ""
                if member and (before := node.prev_named_sibling) is not None:
                    if before.end_byte - before.start_byte <= _QUALIFIER_BYTES:
                        qualifier = src[before.start_byte : before.end_byte].decode("utf-8", "replace")
                        qualifier = qualifier if "\n" not in qualifier else ""
                key = (name, kind, qualifier)
                line = node.start_point[0] + 1
                if (lines := uses.get(key)) is None:
                    uses[key] = [line]
                elif lines[-1] != line:
                    lines.append(line)

    def definition(self, name_node: Node, kind: str, definition_nodes: frozenset[str]) -> None:
        at = name_node.start_byte
        if at in self.defs or (name := self.name_of(name_node)) is None:
            return
        self.claimed.add(at)  # a definition's own name is no use of it (TypeScript's class names are types too)
        node = name_node.parent
        for _ in range(_CLIMB):
            if node is None or node.type in definition_nodes:
                break
            node = node.parent
        if node is None:
            node = name_node
        if kind in ("module", "filemodule"):  # `Acme\Ring`, `acme::ring`: one dotted name
            name = name.replace("\\", ".").replace("::", ".")
        if kind == "filemodule":
            self.defs[at] = _Def(
                node.start_byte, len(self.src), name, "module", node.start_point[0], len(self.lines) - 1
            )
            return
        end_row = node.end_point[0]
        if node.end_point[1] == 0 and end_row > node.start_point[0]:
            end_row -= 1
        self.defs[at] = _Def(node.start_byte, node.end_byte, name, kind, node.start_point[0], end_row)

    def import_(self, node: Node, capture: str) -> None:
        line = node.start_point[0] + 1
        if capture == "import.name":
            if (name := self.name_of(node)) is not None:
                self.import_name(name.rsplit(".", 1)[-1], line)
                if self.language == "python":
                    self.python_from_module(node, name, line)
            return
        if capture == "import.use":
            statement = self.text(node) if node.end_byte - node.start_byte < 4_000 else ""
            paths = rust_use_paths(statement) if self.language == "rust" else php_use_paths(statement)
            for path in paths:
                self.add_import(path, line, relative=False)
                if (name := last_name(path, self.language)) is not None:
                    self.import_name(name, line)
            return
        if node.end_byte - node.start_byte > 1_000:
            return
        written = self.text(node).strip()
        self.add_import(written, line, relative=capture == "import.relative")
        if self.language in _LAST_SEGMENT_NAMES:
            after = node.next_named_sibling  # `import a.b.*`: a package, no name
            if (after is None or after.type != "asterisk") and (name := last_name(written, self.language)):
                self.import_name(name, line)

    def python_from_module(self, node: Node, name: str, line: int) -> None:
        """`from pkg import module` may import a module: pkg/module is imported too (if no such
        file exists, the key matches nothing)."""
        statement = node.parent
        if statement is not None and statement.type == "aliased_import":
            statement = statement.parent
        module = statement.child_by_field_name("module_name") if statement is not None else None
        if module is not None and (written := self.name_of(module)) is not None:
            self.add_import(f"{written}{name}" if written.endswith(".") else f"{written}.{name}", line, relative=False)

    def import_name(self, name: str, line: int) -> None:
        lines = self.imported.get(name)
        if lines is None and len(self.imported) < MAX_IMPORTS:
            self.imported[name] = [line]
        elif lines is not None and line not in lines[-3:]:
            lines.append(line)

    def add_import(self, written: str, line: int, relative: bool) -> None:
        key = module_key(self.language, written, self.rel_dir, relative)
        if key and len(self.imports) < MAX_IMPORTS:
            self.imports.setdefault((key, line), written[:300])

    def graph(self) -> FileGraph:
        """Scopes by one sweep over the definitions sorted by range (outer before inner)."""
        out = FileGraph(truncated=self.truncated)
        self.scopes.sort()
        scope_starts = [s for s, _ in self.scopes]
        stack: list[tuple[int, str, str]] = []  # (end byte, scope path for what is inside, kind)
        for name_at, d in sorted(self.defs.items(), key=lambda i: (i[1].start, -i[1].end)):
            while stack and stack[-1][0] <= d.start:
                stack.pop()
            outer_path, outer_kind = (stack[-1][1], stack[-1][2]) if stack else ("", "")
            i = bisect.bisect_left(scope_starts, d.start)
            explicit = self.scopes[i][1] if i < len(self.scopes) and self.scopes[i][0] < name_at else ""
            scope = qualified(explicit, outer_path) if explicit else outer_path
            if scope.count(".") >= _SCOPE_PARTS:
                scope = ".".join(scope.split(".")[-_SCOPE_PARTS:])
            kind = d.kind
            if kind == "function" and (outer_kind in TYPE_KINDS or explicit):
                kind = "method"
            # A type alias or a macro is no scope: a struct inside `typedef struct ring {...}
            # ring_t` is `ring`, not `ring_t.ring`.
            if kind in ("type", "macro"):
                stack.append((d.end, outer_path, outer_kind))
            else:
                stack.append((d.end, qualified(d.name, scope), kind))
            if kind == "impl":
                continue  # a scope, not a definition
            line = self.lines[d.row].strip()[:_SIGNATURE_MAX] if d.row < len(self.lines) else ""
            out.defs.append((d.name, kind, scope, d.row + 1, d.end_row + 1, line))
            if len(out.defs) >= MAX_DEFS:  # the last window may have passed the budget
                out.truncated = True
                break
        out.refs = [(name, _IMPORT, "", _lines(lines)) for name, lines in self.imported.items()]
        out.refs += [(name, kind, qualifier, _lines(lines)) for (name, kind, qualifier), lines in self.uses.items()]
        out.imports = [
            (module, key, line) for (key, line), module in sorted(self.imports.items(), key=lambda i: i[0][1])
        ]
        return out


def _lines(lines: list[int]) -> str:
    """Ascending, each once, the first _LINES_MAX (captures do not come in text order)."""
    return " ".join(map(str, sorted(set(lines))[:_LINES_MAX] if len(lines) > 1 else lines))


def file_graph(reader: SyntaxReader, root: Node) -> FileGraph:
    """The graph facts of a file the chunker parsed (`reader` holds its text, `root` its tree)."""
    return _Reader(reader).read(root)
