"""What the syntax tree of a file says, language by language: the node tables that drive the
chunker (`LangSpec`, `SPECS`: data, not code per language), a tree-sitter parser per thread,
and `SyntaxReader`, which reads definitions out of a parsed file (their kind, name, rows,
wrappers, TypeScript overloads, Go type headers). `code.py` decides what becomes a chunk."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

from tree_sitter import Node, Parser
from tree_sitter_language_pack import get_parser


@dataclass(frozen=True)
class LangSpec:
    functions: frozenset[str]
    classes: frozenset[str]  # get one chunk if small, else header + members
    containers: frozenset[str] = frozenset()  # namespaces/modules: recurse, name prefix only
    wrappers: frozenset[str] = frozenset()  # decorators, export, template: unwrap, keep range
    imports: frozenset[str] = frozenset()
    comments: frozenset[str] = frozenset({"comment"})
    var_functions: frozenset[str] = frozenset()  # `const f = () => ...`
    declarations: frozenset[str] = field(default_factory=frozenset)  # one chunk each if big enough


def _fs(*names: str) -> frozenset[str]:
    return frozenset(names)


_JS_FUNCS = _fs(
    "function_declaration",
    "generator_function_declaration",
    "method_definition",
    "function_signature",
    "abstract_method_signature",
)
# Declarations without a body: TypeScript overloads. Ones directly above a definition of the
# same name join its chunk, so a question about `concat` finds its overloads and body at once.
_SIGNATURES = frozenset({"function_signature", "method_signature"})
# `export default <anonymous function>`: the module's main function, named after the file.
_ANON_FUNCTIONS = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function", "generator_function_expression"}
)
_JS = LangSpec(
    functions=_JS_FUNCS,
    classes=_fs(
        "class_declaration", "abstract_class_declaration", "class", "interface_declaration", "enum_declaration"
    ),
    containers=_fs("internal_module", "module"),
    wrappers=_fs("export_statement", "decorator"),
    imports=_fs("import_statement"),
    var_functions=_fs("lexical_declaration", "variable_declaration"),
    declarations=_fs("type_alias_declaration"),
)

SPECS: dict[str, LangSpec] = {
    "python": LangSpec(
        functions=_fs("function_definition"),
        classes=_fs("class_definition"),
        wrappers=_fs("decorated_definition"),
        imports=_fs("import_statement", "import_from_statement", "future_import_statement"),
    ),
    "javascript": _JS,
    "typescript": _JS,
    "tsx": _JS,
    "go": LangSpec(
        functions=_fs("function_declaration", "method_declaration"),
        classes=_fs(),
        imports=_fs("import_declaration", "package_clause"),
        declarations=_fs("type_declaration"),
    ),
    "rust": LangSpec(
        functions=_fs("function_item", "function_signature_item"),
        classes=_fs("impl_item", "trait_item"),
        containers=_fs("mod_item"),
        wrappers=_fs(),
        imports=_fs("use_declaration", "extern_crate_declaration"),
        comments=_fs("line_comment", "block_comment"),
        declarations=_fs("struct_item", "enum_item", "union_item", "macro_definition"),
    ),
    "java": LangSpec(
        functions=_fs("method_declaration", "constructor_declaration", "compact_constructor_declaration"),
        classes=_fs(
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
        ),
        imports=_fs("import_declaration", "package_declaration"),
        comments=_fs("line_comment", "block_comment"),
    ),
    "kotlin": LangSpec(
        functions=_fs("function_declaration", "secondary_constructor"),
        classes=_fs("class_declaration", "object_declaration", "companion_object"),
        imports=_fs("import_list", "import_header", "package_header"),
        comments=_fs("line_comment", "multiline_comment", "comment"),
    ),
    "c": LangSpec(
        functions=_fs("function_definition"),
        classes=_fs(),
        imports=_fs("preproc_include"),
        declarations=_fs("struct_specifier", "enum_specifier", "union_specifier", "type_definition"),
    ),
    "cpp": LangSpec(
        functions=_fs("function_definition"),
        classes=_fs("class_specifier", "struct_specifier"),
        containers=_fs("namespace_definition", "linkage_specification"),
        wrappers=_fs("template_declaration"),
        imports=_fs("preproc_include", "using_declaration"),
        declarations=_fs("enum_specifier", "type_definition", "alias_declaration"),
    ),
    "csharp": LangSpec(
        functions=_fs(
            "method_declaration",
            "constructor_declaration",
            "destructor_declaration",
            "operator_declaration",
            "local_function_statement",
        ),
        classes=_fs(
            "class_declaration", "struct_declaration", "interface_declaration", "record_declaration", "enum_declaration"
        ),
        containers=_fs("namespace_declaration", "file_scoped_namespace_declaration"),
        imports=_fs("using_directive"),
    ),
    "ruby": LangSpec(
        functions=_fs("method", "singleton_method"),
        classes=_fs("class", "singleton_class"),
        containers=_fs("module"),
    ),
    "php": LangSpec(
        functions=_fs("function_definition", "method_declaration"),
        classes=_fs("class_declaration", "interface_declaration", "trait_declaration", "enum_declaration"),
        containers=_fs("namespace_definition"),
        imports=_fs("namespace_use_declaration"),
    ),
}

_NAME_TYPES = {
    "identifier",
    "simple_identifier",
    "type_identifier",
    "constant",
    "name",
    "property_identifier",
    "field_identifier",
    "namespace_identifier",
}
_GO_RECEIVER = re.compile(r"(\w+)\s*(?:\[[^\]]*\])?\s*\)\s*$")

# C/C++ export and attribute macros (`class SPDLOG_API logger {`, `SPDLOG_INLINE void f()`,
# `YAML_DECLARE(int) yaml_parser_initialize(...)`). The grammar cannot expand macros and
# misreads these declarations (a whole class becomes one "function" named after the class),
# so they are blanked with spaces of the same length before parsing: byte offsets and lines
# are unchanged and the chunk text is still taken from the original lines.
_C_MACRO_WORD = re.compile(
    rb"\b[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*(?:API|EXPORTS?|INLINE|NOEXCEPT|CONSTEXPR|NODISCARD|DECL|DECLSPEC|EXTERN"
    rb"|HIDDEN|VISIBLE|PUBLIC|LOCAL|DEPRECATED|FORCEINLINE|FORCE_INLINE|ALWAYS_INLINE|MAYBE_UNUSED)\b(?!\s*\()"
)
_C_MACRO_CALL = re.compile(rb"\b[A-Z][A-Z0-9]*_(?:DECLARE|EXPORT|API|DECL)\(([^()\n]*)\)")


# A macro alone on its line that opens or closes a namespace or an `extern "C"` block the
# grammar cannot see (`RAPIDJSON_NAMESPACE_BEGIN`, `G_BEGIN_DECLS`, `NAMESPACE_END(xt)`): read as
# code it swallows everything after it into one declaration. Without arguments, or with them
# when its name says BEGIN, END or NAMESPACE: `YAML_DECLARE(int)` alone on its line is the
# return type of the function below (_C_MACRO_CALL keeps its argument). Possessive quantifiers:
# no backtracking on a hostile line of capitals and underscores.
_C_MACRO_LINE = re.compile(
    rb"(?m)^[ \t]*+(?:(?=[A-Z][A-Z0-9]*+_)[A-Z][A-Z0-9_]*+"
    rb"|(?=[A-Z0-9_]*?(?:BEGIN|END|NAMESPACE))[A-Z][A-Z0-9_]*+\([^()\n]*+\))[ \t]*+;?[ \t]*+$"
)


def blank_macros(src: bytes) -> bytes:
    src = _C_MACRO_WORD.sub(lambda m: b" " * len(m.group(0)), src)
    src = _C_MACRO_CALL.sub(lambda m: b" " * (m.start(1) - m.start(0)) + m.group(1) + b" ", src)
    return _C_MACRO_LINE.sub(lambda m: b" " * len(m.group(0)), src)


_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})


def _wraps_function(node: Node, depth: int = 3) -> bool:
    """A call that wraps a function literal, how many libraries define their functions and
    components: `_curry2(function add(a, b) {...})`, `forwardRef((props, ref) => ...)`,
    `memo(function Button() {...})`, `_curry2(_dispatchable([...], fn, function any() {...}))`."""
    if depth == 0 or node.type != "call_expression":
        return False
    args = node.child_by_field_name("arguments")
    if args is None:
        return False
    return any(a.type in _FUNCTION_VALUES or _wraps_function(a, depth - 1) for a in args.named_children)


_JS_PLUMBING = re.compile(
    r"\s*(?:(?:var|let|const)\s+[\w$]+\s*=\s*(?:/\*.*?\*/\s*)?require\([^()]*\)(?:\.[\w$]+)?"
    r"|(?:module\.)?exports(?:\.[\w$]+)?\s*=\s*[\w$.]+|export\s+default\s+[\w$.]+|\"use strict\"|'use strict')\s*;?\s*\Z",
    re.S,
)

_local = threading.local()


def _parser(language: str) -> Parser:
    # Parsers are not thread-safe; one per thread and language.
    cache: dict[str, Parser] = _local.__dict__.setdefault("parsers", {})
    if language not in cache:
        cache[language] = get_parser(language)  # type: ignore[arg-type]
    return cache[language]


class SyntaxReader:
    """A parsed file's text and the questions the chunker asks of its nodes."""

    def __init__(self, path: str, language: str, text: str) -> None:
        self.path = path
        self.language = language
        self.spec = SPECS[language]
        self.lines = text.split("\n")
        self.src = text.encode("utf-8", "surrogatepass")
        if language in ("c", "cpp"):
            self.src = blank_macros(self.src)

    # -- helpers ---------------------------------------------------------------------------
    def node_text(self, node: Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def rows(self, node: Node) -> tuple[int, int]:
        start, end = node.start_point[0], node.end_point[0]
        if node.end_point[1] == 0 and end > start:
            end -= 1
        return start, end

    def body(self, s: int, e: int) -> str:
        return "\n".join(self.lines[s : e + 1])

    def name(self, node: Node) -> str | None:
        if self._default_export(node) is not None:
            stem = self.path.rsplit("/", 1)[-1].split(".", 1)[0]
            return stem if stem.isidentifier() and stem != "index" else "default"
        if node.type == "method_declaration" and self.language == "go":
            base = node.child_by_field_name("name")
            recv = node.child_by_field_name("receiver")
            m = _GO_RECEIVER.search(self.node_text(recv)) if recv else None
            own = self.node_text(base) if base else None
            return f"{m.group(1)}.{own}" if m and own else own
        # `type` names a Rust impl block; elsewhere it is a return type, not a name.
        for fname in ("name", "type") if node.type == "impl_item" else ("name",):
            n = node.child_by_field_name(fname)
            if n is not None and n.type in _NAME_TYPES | {"generic_type", "scoped_type_identifier"}:
                if n.type == "generic_type" and n.named_child_count:
                    n = n.named_children[0]
                return self.node_text(n)
            if n is not None and fname == "name":
                return self.node_text(n)
        d = node.child_by_field_name("declarator")
        while d is not None:
            if d.type in (
                "identifier",
                "field_identifier",
                "qualified_identifier",
                "destructor_name",
                "operator_name",
                "type_identifier",
            ):
                return self.node_text(d).replace("::", ".")
            d = d.child_by_field_name("declarator") or d.child_by_field_name("name")
        for c in node.named_children:
            if c.type in _NAME_TYPES:
                return self.node_text(c)
        # Go's `type X struct` keeps the name one level down, in a type_spec.
        for c in node.named_children:
            n = c.child_by_field_name("name")
            if n is not None:
                return self.node_text(n)
        return None

    def signature(self, s: int) -> str:
        return self.lines[s].strip()[:300]

    # -- walking ---------------------------------------------------------------------------
    def unwrap(self, node: Node) -> Node:
        """The definition inside wrappers (decorators, export, template), or node itself."""
        seen = 0
        while node.type in self.spec.wrappers and seen < 4:
            inner = None
            for c in node.named_children:
                if self.classify(c) is not None or c.type in self.spec.wrappers:
                    inner = c
            if inner is None:
                return node
            node = inner
            seen += 1
        return node

    def _default_export(self, node: Node) -> Node | None:
        """The anonymous function of `export default (a) => ...`, or None."""
        if node.type != "export_statement" or node.type not in self.spec.wrappers:
            return None
        val = node.child_by_field_name("value")
        return val if val is not None and val.type in _ANON_FUNCTIONS else None

    def classify(self, node: Node) -> str | None:
        t = node.type
        sp = self.spec
        if self._default_export(node) is not None:
            return "function"
        if t in sp.functions:
            return "function"
        if t in sp.classes:
            return "class"
        if t in sp.containers:
            return "container"
        if t in sp.declarations:
            return "declaration"
        if t in sp.var_functions and self._var_function(node) is not None:
            return "function"
        return None

    def _var_function(self, node: Node) -> Node | None:
        decls = [c for c in node.named_children if c.type == "variable_declarator"]
        if len(decls) != 1:
            return None
        val = decls[0].child_by_field_name("value")
        if val is not None and (val.type in _FUNCTION_VALUES or _wraps_function(val)):
            return decls[0]
        return None

    def _import_like(self, node: Node) -> bool:
        """CommonJS plumbing that carries no meaning of its own: `var x = require("./x")`,
        `module.exports = x;`, `export default x;`. Left alone it becomes one-line chunks
        that crowd real code out of the results."""
        if self.spec is not _JS or node.end_point[0] - node.start_point[0] > 2:
            return False
        return _JS_PLUMBING.match(self.node_text(node)) is not None

    def _overloads(self, children: list[Node]) -> set[int]:
        """Start bytes of bodiless signatures directly followed (comments aside) by more
        signatures and then a definition, all of one name: TypeScript overloads."""
        out: set[int] = set()
        run: list[Node] = []
        run_name: str | None = None
        for c in children:
            if c.type in self.spec.comments:
                continue
            inner = self.unwrap(c)
            if inner.type in _SIGNATURES:
                name = self.name(inner)
                if name != run_name:
                    run, run_name = [], name
                run.append(c)
                continue
            if run and run_name and self.classify(inner) == "function" and self.name(inner) == run_name:
                out.update(x.start_byte for x in run)
            run, run_name = [], None
        return out

    def _body_node(self, node: Node) -> Node | None:
        b = node.child_by_field_name("body")
        if b is not None:
            return b
        for c in reversed(node.named_children):
            if c.type in (
                "class_body",
                "declaration_list",
                "field_declaration_list",
                "body_statement",
                "enum_body",
                "interface_body",
                "block",
                "enum_class_body",
                "statement_block",
                "object_type",
            ):
                return c
        return None

    def _go_type_docs(self, root: Node) -> dict[str, str]:
        """Go type name -> `type Name struct` plus the first line of its doc comment."""
        out: dict[str, str] = {}
        previous: Node | None = None
        for node in root.named_children:
            if node.type == "type_declaration":
                for spec in node.named_children:
                    name = spec.child_by_field_name("name")
                    if spec.type != "type_spec" or name is None:
                        continue
                    header = self.lines[self.rows(spec)[0]].strip().rstrip("{").strip()
                    if not header.startswith("type"):
                        header = f"type {header}"
                    doc = ""
                    if (
                        previous is not None
                        and previous.type == "comment"
                        and self.rows(node)[0] - self.rows(previous)[1] == 1
                    ):
                        doc = self.node_text(previous).lstrip("/ ").split("\n", 1)[0].strip()
                    out[self.node_text(name)] = f"{header} // {doc}" if doc else header
            previous = node
        return out
