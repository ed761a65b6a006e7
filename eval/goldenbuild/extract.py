"""Find functions, their doc text and exact line ranges in one source file.

Python uses `ast` (exact docstring nodes); JavaScript, TypeScript and Go use tree-sitter with
the doc comment that directly precedes a declaration. Every recognised function is reported,
documented or not, so that the corpus statistics count all of them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import PurePosixPath
from typing import Any

from goldenbuild import docs
from goldenbuild.curly import CURLY_SUFFIXES, extract_curly

# Line numbers are 1-based over b"\n"-separated lines, like tree-sitter rows + 1 and ast.


@dataclass
class FunctionDoc:
    path: str  # relative to the indexed root, POSIX
    symbol: str  # qualified: Class.method
    start_line: int  # the whole definition, decorators / export keyword included
    end_line: int
    doc_lines: tuple[int, int] | None = None  # doc lines removed from the stripped copy
    # Lines put where the doc was, for bodies that would be empty without it (Python).
    replacement: list[str] = field(default_factory=list)
    query: str | None = None  # cleaned summary, None when the doc is unusable
    public: bool = True  # not private, not a test, not hidden by doc tags

    @property
    def eligible(self) -> bool:
        return self.public and self.query is not None


_TEST_PARTS = {"test", "tests", "testing", "__tests__", "spec", "specs", "testdata"}


def is_test_path(path: str) -> bool:
    pure = PurePosixPath(path)
    name = pure.name
    return (
        bool(_TEST_PARTS & set(pure.parts[:-1]))
        or name.startswith("test_")
        or name == "conftest.py"
        or bool(re.search(r"([._-](test|spec)|_test)\.\w+$", name))
    )


def language_of(path: str) -> str | None:
    suffix = PurePosixPath(path).suffix
    return {
        ".py": "python",
        ".js": "javascript",
        ".mjs": "javascript",
        ".cjs": "javascript",
        ".jsx": "javascript",
        ".ts": "typescript",
        ".tsx": "tsx",
        ".go": "go",
        **CURLY_SUFFIXES,
    }.get(suffix)


def extract(path: str, source: bytes, project_language: str | None = None) -> list[FunctionDoc]:
    language = language_of(path)
    if language == "c" and project_language == "cpp":
        language = "cpp"  # a C++ project's .h files are C++
    if language is None or path.endswith(".d.ts"):
        return []
    if language == "python":
        return _python(path, source)
    if language == "go":
        return _go(path, source)
    if language in ("javascript", "typescript", "tsx"):
        return _ecmascript(path, source, language)
    found = extract_curly(path, source, language, is_test_path(path))
    return [FunctionDoc(path, f.symbol, f.start_line, f.end_line, f.doc_lines, [], f.query, f.public) for f in found]


# --------------------------------------------------------------------------- Python (ast)


def _only_whitespace(data: bytes) -> bool:
    return not data.strip()


def _python_doc(
    node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[bytes]
) -> tuple[tuple[int, int], list[str]] | None:
    """Doc line range and replacement, when the docstring sits on lines of its own."""
    if not node.body:
        return None
    first = node.body[0]
    if not (
        isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    ):
        return None
    start, end = first.lineno, first.end_lineno or first.lineno
    if start <= node.lineno:  # `def f(): """doc"""` on one line: cannot remove lines
        return None
    head, tail = lines[start - 1], lines[end - 1]
    if not _only_whitespace(head[: first.col_offset]):
        return None
    after = tail[first.end_col_offset or 0 :].strip()
    if after and not after.startswith(b"#"):
        return None
    if len(node.body) > 1:
        return (start, end), []
    # Keep the body valid: the docstring was the only statement.
    indent = head[: first.col_offset].decode("utf-8", "replace")
    return (start, end), [indent + "..."]


def _python(path: str, source: bytes) -> list[FunctionDoc]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    lines = source.split(b"\n")
    test_file = is_test_path(path)
    found: list[FunctionDoc] = []

    def visit(node: ast.AST, scope: tuple[str, ...], in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, (*scope, child.name), in_function)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                qualified = (*scope, child.name)
                start = min([d.lineno for d in child.decorator_list] + [child.lineno])
                item = FunctionDoc(path, ".".join(qualified), start, child.end_lineno or start)
                item.public = not (
                    test_file
                    or in_function
                    or child.name.startswith("test")
                    or any(part.startswith("_") for part in qualified)
                )
                doc = _python_doc(child, lines)
                if doc is not None:
                    item.doc_lines, item.replacement = doc
                    text = ast.get_docstring(child, clean=True)
                    item.query = docs.python_query(text) if text else None
                found.append(item)
                visit(child, qualified, True)
            else:
                visit(child, scope, in_function)

    visit(tree, (), False)
    return found


# ------------------------------------------------------------------- tree-sitter helpers


@cache
def _parser(language: str) -> Any:
    from tree_sitter_language_pack import get_parser

    return get_parser(language)  # type: ignore[arg-type]


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def _standalone(node: Any, lines: list[bytes]) -> bool:
    """True when nothing but whitespace shares the node's first and last lines."""
    start_row, start_col = node.start_point
    end_row, end_col = node.end_point
    return _only_whitespace(lines[start_row][:start_col]) and _only_whitespace(lines[end_row][end_col:])


def _walk(root: Any) -> Iterator[Any]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


# ------------------------------------------------------------- JavaScript and TypeScript

_JS_FUNCTION_VALUES = {
    "arrow_function",
    "function_expression",
    "function",
    "generator_function",
}
_JS_DECLARATIONS = {"function_declaration", "generator_function_declaration"}
# Declarations without a body (overloads, interface members): docs are stripped, but they are
# never answers, since the answer is the code that implements the documented behaviour.
_JS_SIGNATURES = {"function_signature", "method_signature", "abstract_method_signature"}
_JS_CLASSES = {"class_declaration", "abstract_class_declaration", "class"}
# Wrappers whose range is the answer's range when they hold the declaration.
_JS_WRAPPERS = {"export_statement", "ambient_declaration"}


def _js_function_value(value: Any | None) -> bool:
    """A function, or a call that wraps one (`compose(function () {...})`, `memo(() => ...)`),
    which is how many libraries define their public functions."""
    if value is None:
        return False
    if value.type in _JS_FUNCTION_VALUES:
        return True
    if value.type == "call_expression":
        args = value.child_by_field_name("arguments")
        return args is not None and any(a.type in _JS_FUNCTION_VALUES for a in args.children)
    return False


_JS_FUNCTION_BODIES = _JS_FUNCTION_VALUES | _JS_DECLARATIONS | {"method_definition"}


def _js_nested(node: Any) -> bool:
    """Inside another function's body: a closure, private to it (as nested defs in Python)."""
    current = node.parent
    while current is not None:
        if current.type in _JS_FUNCTION_BODIES:
            return True
        current = current.parent
    return False


def _js_class_name(node: Any) -> str | None:
    current = node.parent
    while current is not None:
        if current.type in _JS_CLASSES:
            name = current.child_by_field_name("name")
            return _text(name) if name is not None else None
        current = current.parent
    return None


@dataclass(frozen=True)
class _JsUnit:
    symbol: str
    anchor: Any  # the node whose range is the answer (export wrapper included)
    private: bool = False
    # A value that is not visibly a function (`var flow = createFlow();`) counts only when
    # its doc describes a function (@param/@returns), as libraries built from factories do.
    needs_signature: bool = False


_JSDOC_SIGNATURE = re.compile(r"@(param|arg|argument|returns?)\b")


def _wrapped(node: Any) -> Any:
    parent = node.parent
    return parent if parent is not None and parent.type in _JS_WRAPPERS else node


def _js_unit(node: Any) -> _JsUnit | None:
    """The function-like declaration `node` starts, if any."""
    kind = node.type
    if kind in _JS_DECLARATIONS or kind in _JS_SIGNATURES:
        name = node.child_by_field_name("name")
        if name is None:
            return None
        return _JsUnit(_text(name), _wrapped(node))
    if kind in ("method_definition", "method_signature", "abstract_method_signature"):
        name = node.child_by_field_name("name")
        if name is None:
            return None
        private = name.type == "private_property_identifier" or any(
            c.type == "accessibility_modifier" and _text(c) in ("private", "protected") for c in node.children
        )
        owner = _js_class_name(node)
        return _JsUnit(f"{owner}.{_text(name)}" if owner else _text(name), node, private)
    if kind in ("public_field_definition", "field_definition"):
        value = node.child_by_field_name("value")
        name = node.child_by_field_name("name") or node.child_by_field_name("property")
        if name is None or not _js_function_value(value):
            return None
        owner = _js_class_name(node)
        private = name.type == "private_property_identifier" or any(
            c.type == "accessibility_modifier" and _text(c) in ("private", "protected") for c in node.children
        )
        return _JsUnit(f"{owner}.{_text(name)}" if owner else _text(name), node, private)
    if kind in ("lexical_declaration", "variable_declaration"):
        declarators = [c for c in node.named_children if c.type == "variable_declarator"]
        if len(declarators) != 1:
            return None
        name = declarators[0].child_by_field_name("name")
        if name is None or name.type != "identifier":
            return None
        value = declarators[0].child_by_field_name("value")
        if value is None:
            return None
        return _JsUnit(_text(name), _wrapped(node), needs_signature=not _js_function_value(value))
    if kind == "expression_statement":
        # `Foo.prototype.bar = function () {...}` and `exports.bar = ...`
        expr = node.named_children[0] if node.named_children else None
        if expr is None or expr.type != "assignment_expression":
            return None
        left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
        if left is None or left.type != "member_expression" or not _js_function_value(right):
            return None
        parts = [p for p in _text(left).split(".") if p not in ("prototype", "exports", "module")]
        return _JsUnit(".".join(parts[-2:]) or _text(left), node)
    if kind == "export_statement" and _js_function_value(node.child_by_field_name("value")):
        return _JsUnit("default", node)  # `export default (x) => ...`: named after the file
    if kind == "pair":
        key, value = node.child_by_field_name("key"), node.child_by_field_name("value")
        if key is None or not _js_function_value(value):
            return None
        return _JsUnit(_text(key).strip("'\""), node)
    return None


# Blocks that document the file, not the declaration below them.
_FILE_DOC = re.compile(rb"@(license|preserve|file|fileoverview|module|copyright)\b")


def _jsdoc_blocks(anchor: Any, lines: list[bytes]) -> list[Any]:
    """The JSDoc comments right above a declaration, nearest first.

    Blank lines may separate a JSDoc block from its declaration (TypeScript still attaches
    it); the comment being the previous sibling rules out code in between. Stacked blocks
    (an old and a new description) all document the declaration, so all are stripped."""
    blocks: list[Any] = []
    below = anchor
    comment = anchor.prev_sibling
    while (
        comment is not None
        and comment.type == "comment"
        and comment.text.startswith(b"/**")
        and _standalone(comment, lines)
        and not _FILE_DOC.search(comment.text)
        and all(_only_whitespace(line) for line in lines[comment.end_point[0] + 1 : below.start_point[0]])
    ):
        blocks.append(comment)
        below, comment = comment, comment.prev_sibling
    return blocks


def _ecmascript(path: str, source: bytes, language: str) -> list[FunctionDoc]:
    tree = _parser(language).parse(source)
    lines = source.split(b"\n")
    test_file = is_test_path(path)
    found: list[FunctionDoc] = []
    seen: set[int] = set()
    for node in _walk(tree.root_node):
        unit = _js_unit(node)
        if unit is None:
            continue
        symbol, anchor, private = unit.symbol, unit.anchor, unit.private
        if anchor.start_byte in seen:  # an export wrapper reached twice
            continue
        blocks = _jsdoc_blocks(anchor, lines)
        if unit.needs_signature and not any(_JSDOC_SIGNATURE.search(_text(b)) for b in blocks):
            continue
        if symbol == "default":
            symbol = PurePosixPath(path).stem
        seen.add(anchor.start_byte)
        item = FunctionDoc(path, symbol, anchor.start_point[0] + 1, anchor.end_point[0] + 1)
        short = symbol.rsplit(".", 1)[-1]
        item.public = not (
            test_file or private or short.startswith(("_", "#")) or node.type in _JS_SIGNATURES or _js_nested(anchor)
        )
        if blocks:
            nearest = _text(blocks[0])
            item.doc_lines = (blocks[-1].start_point[0] + 1, blocks[0].end_point[0] + 1)
            item.public = item.public and not any(docs.jsdoc_hidden(_text(b)) for b in blocks)
            item.query = docs.jsdoc_query(nearest)
        found.append(item)
    return found


# ---------------------------------------------------------------------------------- Go

_GO_SKIP_PREFIXES = ("Test", "Benchmark", "Example", "Fuzz")


def _go_receiver_type(node: Any) -> str | None:
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return None
    match = re.search(r"\*?\s*([A-Za-z_]\w*)\s*(\[[^\]]*\])?\s*\)\s*$", _text(receiver))
    return match.group(1) if match else None


def _go_doc(anchor: Any, lines: list[bytes]) -> Any | None:
    """First and last comment nodes of the contiguous block right above the declaration."""
    block: list[Any] = []
    next_row = anchor.start_point[0]
    current = anchor.prev_sibling
    while (
        current is not None
        and current.type == "comment"
        and current.end_point[0] + 1 == next_row
        and _standalone(current, lines)
    ):
        block.append(current)
        next_row = current.start_point[0]
        current = current.prev_sibling
    return (block[-1], block[0]) if block else None


def _go(path: str, source: bytes) -> list[FunctionDoc]:
    tree = _parser("go").parse(source)
    lines = source.split(b"\n")
    test_file = path.endswith("_test.go") or is_test_path(path)
    found: list[FunctionDoc] = []
    for node in tree.root_node.children:
        if node.type not in ("function_declaration", "method_declaration"):
            continue
        name_node = node.child_by_field_name("name")
        if name_node is None:
            continue
        name = _text(name_node)
        receiver = _go_receiver_type(node) if node.type == "method_declaration" else None
        symbol = f"{receiver}.{name}" if receiver else name
        item = FunctionDoc(path, symbol, node.start_point[0] + 1, node.end_point[0] + 1)
        item.public = not (
            test_file
            or not name[:1].isupper()
            or (receiver is not None and not receiver[:1].isupper())
            or (receiver is None and name.startswith(_GO_SKIP_PREFIXES))
        )
        block = _go_doc(node, lines)
        if block is not None:
            first, last = block
            item.doc_lines = (first.start_point[0] + 1, last.end_point[0] + 1)
            raw = source[first.start_byte : last.end_byte].decode("utf-8", "replace")
            item.query = docs.go_query(raw, name)
        found.append(item)
    return found
