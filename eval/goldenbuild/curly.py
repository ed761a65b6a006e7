"""Functions and their doc comments in Rust, Java, Kotlin, C#, C, C++, Ruby and PHP.

One table-driven walk over the tree-sitter tree serves all eight languages: each language
names its function nodes, the containers that qualify a name (class, impl, module), its doc
comment style and its privacy rule. The doc is the block of doc-style comments directly
above the declaration (attribute lines in between are skipped, as Rust puts `#[inline]`
between the doc and the `fn`); it is found by line, not by sibling, because grammars attach
a class's first comment to different nodes (Ruby puts it before the class body).

Declarations without a body (C prototypes, interface and trait signatures, abstract
methods) are reported with their doc so that the doc is stripped from the indexed copy, but
they are never answers: the answer is the code that implements the behaviour.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from goldenbuild import docs
from ragls.text.languages import CODE_EXTENSIONS

# The languages this module extracts from, with ragls's own extension table (one source of truth).
CURLY_LANGUAGES = frozenset({"rust", "java", "kotlin", "csharp", "c", "cpp", "ruby", "php"})
CURLY_SUFFIXES: dict[str, str] = {ext: lang for ext, lang in CODE_EXTENSIONS.items() if lang in CURLY_LANGUAGES}


@dataclass(frozen=True)
class Spec:
    functions: frozenset[str]  # definitions with a body (answers)
    signatures: frozenset[str] = frozenset()  # declarations whose docs are stripped only
    containers: frozenset[str] = frozenset()  # nodes whose name qualifies the symbol
    doc: re.Pattern[str] = re.compile(r"^/\*\*(?!\*)")  # a comment that is documentation
    skip_rows: frozenset[str] = frozenset()  # nodes allowed between the doc and the declaration
    hidden: re.Pattern[str] = re.compile(r"@(private|internal|hidden|ignore)\b|:nodoc:|@api\s+private")
    # C libraries often leave a blank line between a function's comment and its definition
    # (`/* Create a parser. */`, blank, `YAML_DECLARE(int)`, `yaml_parser_initialize(...)`).
    blank_gap: bool = False


_BLOCK_DOC = re.compile(r"^/\*\*(?!\*)")
SPECS: dict[str, Spec] = {
    "rust": Spec(
        functions=frozenset({"function_item"}),
        signatures=frozenset({"function_signature_item"}),
        containers=frozenset({"impl_item", "trait_item", "mod_item"}),
        doc=re.compile(r"^(///(?!/)|/\*\*(?!\*))"),
        skip_rows=frozenset({"attribute_item"}),
    ),
    "java": Spec(
        functions=frozenset({"method_declaration", "constructor_declaration"}),
        containers=frozenset({"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"}),
        doc=_BLOCK_DOC,
    ),
    "kotlin": Spec(
        functions=frozenset({"function_declaration", "secondary_constructor"}),
        containers=frozenset({"class_declaration", "object_declaration"}),
        doc=_BLOCK_DOC,
    ),
    "csharp": Spec(
        functions=frozenset(
            {"method_declaration", "constructor_declaration", "operator_declaration", "conversion_operator_declaration"}
        ),
        containers=frozenset(
            {"class_declaration", "struct_declaration", "interface_declaration", "record_declaration"}
        ),
        doc=re.compile(r"^///(?!/)"),
    ),
    "c": Spec(
        functions=frozenset({"function_definition"}),
        signatures=frozenset({"declaration"}),
        doc=re.compile(r"^(/\*(?!\*+/)|//)"),
        blank_gap=True,
    ),
    "cpp": Spec(
        functions=frozenset({"function_definition"}),
        signatures=frozenset({"declaration", "field_declaration"}),
        containers=frozenset({"class_specifier", "struct_specifier"}),
        doc=re.compile(r"^(/\*(?!\*+/)|//)"),
    ),
    "ruby": Spec(
        functions=frozenset({"method", "singleton_method"}),
        containers=frozenset({"class", "module"}),
        doc=re.compile(r"^#(?![!{])(?!\s*(frozen_string_literal|rubocop|-\*-|encoding:))"),
    ),
    "php": Spec(
        functions=frozenset({"method_declaration", "function_definition"}),
        containers=frozenset({"class_declaration", "interface_declaration", "trait_declaration", "enum_declaration"}),
        doc=_BLOCK_DOC,
    ),
}
_COMMENTS = frozenset({"comment", "line_comment", "block_comment", "multiline_comment"})
# Comments that are about the file or its licence, never about the function below.
_FILE_HEADER = re.compile(r"copyright|licen[sc]e|SPDX-|@file\b|@license\b", re.IGNORECASE)
_PRIVATE_NAMESPACES = {"detail", "details", "impl", "internal", "priv"}


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def _name_node(node: Any, language: str) -> Any | None:
    if language in ("c", "cpp"):
        declarator = node.child_by_field_name("declarator")
        while declarator is not None and declarator.type != "function_declarator":
            declarator = declarator.child_by_field_name("declarator")
        return None if declarator is None else declarator.child_by_field_name("declarator")
    named = node.child_by_field_name("name")
    if named is not None:
        return named
    for child in node.children:  # Kotlin: the name is a plain child
        if child.type in ("simple_identifier", "identifier", "type_identifier"):
            return child
    return None


def _container_name(node: Any) -> str | None:
    if node.type == "impl_item":
        target = node.child_by_field_name("type")
        return None if target is None else re.sub(r"<.*>", "", _text(target)).strip()
    named = node.child_by_field_name("name")
    if named is None:
        named = next((c for c in node.children if c.type in ("type_identifier", "simple_identifier")), None)
    return None if named is None else re.sub(r"<.*>", "", _text(named)).replace("::", ".")


def _has_body(node: Any, language: str) -> bool:
    if language == "kotlin":
        return any(c.type == "function_body" for c in node.children) or node.type == "secondary_constructor"
    if language in ("c", "cpp", "ruby"):
        return True
    return node.child_by_field_name("body") is not None or any(
        c.type == "arrow_expression_clause" for c in node.children
    )


def _is_prototype(node: Any) -> bool:
    """A C/C++ declaration or member declaration that declares a function."""
    stack = [node.child_by_field_name("declarator")]
    while stack:
        current = stack.pop()
        if current is None:
            continue
        if current.type == "function_declarator":
            return True
        stack.append(current.child_by_field_name("declarator"))
    return False


def _modifiers(node: Any) -> set[str]:
    words: set[str] = set()
    for child in node.children:
        if child.type in ("modifiers", "modifier", "visibility_modifier", "storage_class_specifier"):
            words.update(re.findall(r"[a-z_]+(?:\([a-z]+\))?", _text(child)))
            words.add(_text(child).strip())
    return words


def _cpp_access(node: Any) -> str:
    """public/protected/private of a member function, by the nearest access label above it."""
    body = node.parent
    while body is not None and body.type == "template_declaration":
        node, body = body, body.parent
    if body is None or body.type != "field_declaration_list":
        return "public"
    label = "private" if body.parent is not None and body.parent.type == "class_specifier" else "public"
    for child in body.children:
        if child.start_byte >= node.start_byte:
            break
        if child.type == "access_specifier":
            label = _text(child).strip().rstrip(":").strip()
    return label


def _ruby_private(node: Any) -> bool:
    parent = node.parent
    if parent is not None and parent.type == "argument_list":
        call = parent.parent
        method = None if call is None else call.child_by_field_name("method")
        return method is not None and _text(method) in ("private", "protected", "private_class_method")
    if parent is None:
        return False
    label = "public"
    for child in parent.children:
        if child.start_byte >= node.start_byte:
            break
        if child.type == "identifier" and _text(child) in ("private", "protected", "public"):
            label = _text(child)
    return label != "public"


def _public(node: Any, language: str, name: str, path: str, ancestors: list[Any]) -> bool:
    mods = _modifiers(node)
    if name.startswith("_") and language != "php":
        return False
    if language == "rust":
        in_trait = any(
            a.type == "trait_item" or (a.type == "impl_item" and a.child_by_field_name("trait")) for a in ancestors
        )
        in_tests = any(a.type == "mod_item" and _text(a.child_by_field_name("name") or a) == "tests" for a in ancestors)
        return not in_tests and ("pub" in mods or in_trait)
    if language == "java":
        return "private" not in mods
    if language == "kotlin":
        return not mods & {"private", "internal"}
    if language == "csharp":
        return bool(mods & {"public", "protected", "internal"}) or any(
            a.type == "interface_declaration" for a in ancestors
        )
    if language == "c":
        # `static` is C's only privacy, and it is where C libraries document their logic;
        # a file-local function is still what someone searching the project looks for.
        return True
    if language == "cpp":
        namespaces = {
            _text(a.child_by_field_name("name"))
            for a in ancestors
            if a.type == "namespace_definition" and a.child_by_field_name("name")
        }
        if namespaces & _PRIVATE_NAMESPACES or _cpp_access(node) != "public":
            return False
        return "static" not in mods or not path.endswith((".c", ".cc", ".cpp", ".cxx"))
    if language == "ruby":
        return not _ruby_private(node)
    if language == "php":
        return "private" not in mods
    return True


def comment_lines(raw: str) -> list[str]:
    """The prose of a block of comments in any of these languages' syntaxes."""
    out: list[str] = []
    for line in raw.splitlines():
        s = line.strip()
        s = re.sub(r"^(///?!?|/\*[*!]?|#)\s?", "", s)
        s = re.sub(r"\s*\*+/\s*$", "", s)
        s = re.sub(r"^\*(?!\*)\s?", "", s)
        out.append(s)
    return out


_XML_REF = re.compile(r"<(?:see|seealso)\s+(?:cref|langword|href)=\"(?:[A-Z]:)?([^\"]+)\"\s*/>")
_XML_PARAMREF = re.compile(r"<(?:paramref|typeparamref)\s+name=\"([^\"]+)\"\s*/>")
_INTRA_LINK = re.compile(r"\[`?([^\]`]+)`?\](?!\()")


def doc_query(raw: str, language: str, name: str) -> str | None:
    lines = comment_lines(raw)
    if language == "csharp":
        text = "\n".join(lines)
        summary = re.search(r"<summary>(.*?)</summary>", text, re.S)
        text = summary.group(1) if summary else text
        text = _XML_PARAMREF.sub(r"\1", _XML_REF.sub(lambda m: m.group(1).rsplit(".", 1)[-1], text))
        lines = text.splitlines()
    summary_text = docs.first_paragraph(lines)
    if language == "rust":
        summary_text = _INTRA_LINK.sub(r"\1", summary_text)
    if summary_text.lower().startswith(("deprecated", "todo", "fixme", "xxx")):
        return None
    # "cmark_parse_document: Parses ...", "Foo - does ...", "Foo() does ...": the name is not
    # something a user asking would know.
    short = name.rsplit(".", 1)[-1]
    match = re.match(rf"^{re.escape(short)}(\(\))?\s*[:\-–]?\s+(?P<rest>.+)", summary_text)
    if match:
        rest = match.group("rest")
        summary_text = rest[:1].upper() + rest[1:]
    return docs.finish(summary_text)


@dataclass
class Found:
    symbol: str
    start_line: int
    end_line: int
    doc_lines: tuple[int, int] | None
    query: str | None
    public: bool


Comment = tuple[Any, int, int]  # node, first row, last row (0-based)


def _doc_block(
    anchor: Any, comments: dict[int, Comment], skip: dict[int, int], lines: list[bytes], spec: Spec
) -> tuple[int, int, str] | None:
    """Rows (0-based, inclusive) and text of the doc comments directly above `anchor`."""
    row = anchor.start_point[0] - 1
    while row in skip or (spec.blank_gap and row >= 0 and not lines[row].strip()):
        row = skip[row] - 1 if row in skip else row - 1
    block: list[Comment] = []
    while row >= 0 and row in comments:
        comment = comments[row]
        text = _text(comment[0]).lstrip()
        if not spec.doc.match(text) or _FILE_HEADER.search(text):
            break
        block.append(comment)
        row = comment[1] - 1
    if not block:
        return None
    block.reverse()
    raw = "\n".join(_text(c[0]).rstrip("\n") for c in block)
    return block[0][1], block[-1][2], raw


def _standalone_comments(root: Any, lines: list[bytes]) -> dict[int, Comment]:
    """Comments alone on their lines, keyed by their last row."""
    out: dict[int, Comment] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _COMMENTS:
            (sr, sc), (er, ec) = node.start_point, node.end_point
            text = node.text
            if text.endswith(b"\n"):  # Rust line comments include their newline
                er, ec = er - 1, len(lines[er - 1]) if er - 1 < len(lines) else 0
            if not lines[sr][:sc].strip() and not lines[er][ec:].strip():
                out[er] = (node, sr, er)
            continue
        stack.extend(node.children)
    return out


def extract_curly(path: str, source: bytes, language: str, test_file: bool) -> list[Found]:
    from goldenbuild.extract import _parser

    spec = SPECS[language]
    tree = _parser(language).parse(source)
    lines = source.split(b"\n")
    comments = _standalone_comments(tree.root_node, lines)
    skip: dict[int, int] = {}  # last row of an attribute -> its first row
    found: list[Found] = []

    def visit(node: Any, ancestors: list[Any], in_function: bool) -> None:
        kind = node.type
        if kind in spec.skip_rows:
            skip[node.end_point[0]] = node.start_point[0]
        is_function = kind in spec.functions
        is_signature = kind in spec.signatures and (language not in ("c", "cpp") or _is_prototype(node))
        if is_function or is_signature:
            name_node = _name_node(node, language)
            if name_node is not None:
                _record(node, name_node, ancestors, in_function, is_function and _has_body(node, language))
        nested = in_function or is_function
        for child in node.children:
            visit(child, [*ancestors, node], nested)

    def _record(node: Any, name_node: Any, ancestors: list[Any], in_function: bool, answer: bool) -> None:
        anchor = node
        if node.parent is not None and node.parent.type == "template_declaration":
            anchor = node.parent
        name = re.sub(r"<[^<>]*>", "", _text(name_node)).replace("::", ".").replace("->", ".")
        if language == "ruby" and node.type == "singleton_method":
            name = _text(name_node)
        scope = [n for n in (_container_name(a) for a in ancestors if a.type in spec.containers) if n]
        symbol = ".".join([*scope, name]) if "." not in name or not scope else name
        block = _doc_block(anchor, comments, skip, lines, spec)
        public = (
            answer
            and not test_file
            and not in_function
            and _public(node, language, name.rsplit(".", 1)[-1], path, ancestors)
        )
        doc_lines = query = None
        if block is not None:
            first, last, raw = block
            doc_lines = (first + 1, last + 1)
            public = public and not spec.hidden.search(raw)
            query = doc_query(raw, language, name)
        if language == "rust" and any("doc(hidden)" in _text(a) for a in _attributes_above(anchor)):
            public = False
        found.append(Found(symbol, anchor.start_point[0] + 1, anchor.end_point[0] + 1, doc_lines, query, public))

    visit(tree.root_node, [], False)
    return found


def _attributes_above(node: Any) -> list[Any]:
    out = []
    current = node.prev_sibling
    while current is not None and current.type in ("attribute_item", "line_comment", "block_comment"):
        if current.type == "attribute_item":
            out.append(current)
        current = current.prev_sibling
    return out
