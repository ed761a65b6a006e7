"""The tree-sitter queries that find definitions, references and imports, one per chunked
language: data, in the style of tree-sitter's `tags.scm` (tree-sitter-language-pack 0.13.0 ships
none of those, so they are written here against its grammars).

One query per language, run once over the tree (a query run walks every node: one walk is most
of its cost), its captures read as they come (extract.py). Every capture is on a name:

- `@def.<kind>` a definition's name (its definition is the nearest enclosing node of a type
  that starts a `@def` pattern, `DEFINITION_NODES`); `@def.filemodule` a namespace that runs to
  the end of the file (C#'s `namespace X;`, PHP's); `@scope` the type a definition's own syntax
  names (a Go receiver, C++'s `Ring::push`); `@impl` a scope that is no definition (Rust's
  `impl Ring`);
- `@call`, `@ref` a use of a name (a call, any other reference); `.member` when it is reached
  through something (`r.push()`, `geo.Distance`): the node before it is that qualifier;
  `@ref.field` a field or attribute read (`self.items`), whose qualifier is not kept (mostly
  `self`: reading it for every field was a tenth of the extraction's time);
- `@import` a module (path or dotted name) imported; `@import.relative` a path relative to the
  file's folder; `@import.name` a name an import brings in; `@import.use` a whole statement whose
  text imports.py reads (Rust's `use` trees, PHP's `use` groups).

Captures whose name starts with `_` only serve predicates."""

from __future__ import annotations

import re
import threading

from tree_sitter import Query
from tree_sitter_language_pack import get_language

_JS_COMMON = r"""
(function_declaration name: (identifier) @def.function)
(generator_function_declaration name: (identifier) @def.function)
(method_definition name: (property_identifier) @def.method)
(variable_declarator name: (identifier) @def.function value: [(arrow_function) (function_expression)])
(call_expression function: (identifier) @call)
(call_expression function: (member_expression property: (property_identifier) @call.member))
(new_expression constructor: (identifier) @call)
(new_expression constructor: (member_expression property: (property_identifier) @call.member))
(member_expression property: (property_identifier) @ref.field)
(import_statement source: (string (string_fragment) @import))
(import_specifier name: (identifier) @import.name)
(import_clause (identifier) @import.name)
(export_specifier name: (identifier) @import.name)
(export_statement source: (string (string_fragment) @import))
(call_expression
  function: (identifier) @_require (#eq? @_require "require")
  arguments: (arguments . (string (string_fragment) @import)))
"""

_JS = (
    _JS_COMMON
    + r"""
(class_declaration name: (identifier) @def.class)
(class name: (identifier) @def.class)
(class_heritage (identifier) @ref)
(class_heritage (member_expression property: (property_identifier) @ref.field))
"""
)

_TS = (
    _JS_COMMON
    + r"""
(class_declaration name: (type_identifier) @def.class)
(abstract_class_declaration name: (type_identifier) @def.class)
(class name: (type_identifier) @def.class)
(interface_declaration name: (type_identifier) @def.interface)
(type_alias_declaration name: (type_identifier) @def.type)
(enum_declaration name: (identifier) @def.enum)
(function_signature name: (identifier) @def.function)
(method_signature name: (property_identifier) @def.method)
(abstract_method_signature name: (property_identifier) @def.method)
(internal_module name: (identifier) @def.module)
(type_identifier) @ref
(extends_clause value: (identifier) @ref)
"""
)

_PYTHON = r"""
(class_definition name: (identifier) @def.class)
(function_definition name: (identifier) @def.function)
(call function: (identifier) @call)
(call function: (attribute attribute: (identifier) @call.member))
(attribute attribute: (identifier) @ref.field)
(type (identifier) @ref)
(type (subscript value: (identifier) @ref))
(type (generic_type (identifier) @ref))
(type (binary_operator [(identifier) @ref (binary_operator (identifier) @ref)]))
(decorator (identifier) @ref)
(except_clause (identifier) @ref)
(except_clause (tuple (identifier) @ref))
(attribute object: (identifier) @ref (#match? @ref "^[A-Z]"))
(argument_list (identifier) @ref (#match? @ref "^[A-Z]"))
(argument_list (tuple (identifier) @ref (#match? @ref "^[A-Z]")))
(assignment right: (identifier) @ref (#match? @ref "^[A-Z]"))
(assignment
  left: (identifier) @_all (#eq? @_all "__all__")
  right: (list (string (string_content) @ref)))
(class_definition superclasses: (argument_list (identifier) @ref))
(import_statement name: (dotted_name) @import)
(import_statement name: (aliased_import name: (dotted_name) @import))
(import_from_statement module_name: (_) @import)
(import_from_statement name: (dotted_name) @import.name)
(import_from_statement name: (aliased_import name: (dotted_name) @import.name))
"""

_GO = r"""
(function_declaration name: (identifier) @def.function)
(method_declaration
  receiver: (parameter_list (parameter_declaration type: [
    (type_identifier) @scope
    (pointer_type (type_identifier) @scope)
    (generic_type type: (type_identifier) @scope)
    (pointer_type (generic_type type: (type_identifier) @scope))]))
  name: (field_identifier) @def.method)
(type_spec name: (type_identifier) @def.struct type: (struct_type))
(type_spec name: (type_identifier) @def.interface type: (interface_type))
(type_spec name: (type_identifier) @def.type type: [
  (type_identifier) (qualified_type) (generic_type) (pointer_type) (slice_type) (map_type)
  (array_type) (channel_type) (function_type)])
(type_alias name: (type_identifier) @def.type)
(method_elem name: (field_identifier) @def.method)
(call_expression function: (identifier) @call)
(call_expression function: (selector_expression field: (field_identifier) @call.member))
(selector_expression field: (field_identifier) @ref.field)
(type_identifier) @ref
(qualified_type name: (type_identifier) @ref.member)
(composite_literal type: (type_identifier) @call)
(import_spec path: (interpreted_string_literal (interpreted_string_literal_content) @import))
"""

_RUST = r"""
(struct_item name: (type_identifier) @def.struct)
(union_item name: (type_identifier) @def.struct)
(enum_item name: (type_identifier) @def.enum)
(trait_item name: (type_identifier) @def.trait)
(type_item name: (type_identifier) @def.type)
(function_item name: (identifier) @def.function)
(function_signature_item name: (identifier) @def.function)
(mod_item name: (identifier) @def.module body: (_))
(macro_definition name: (identifier) @def.macro)
(impl_item type: (type_identifier) @impl)
(impl_item type: (generic_type type: (type_identifier) @impl))
(impl_item type: (scoped_type_identifier name: (type_identifier) @impl))
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call.member))
(call_expression function: (scoped_identifier name: (identifier) @call.member))
(call_expression function: (generic_function function: (identifier) @call))
(call_expression function: (generic_function function: (field_expression field: (field_identifier) @call.member)))
(call_expression function: (generic_function function: (scoped_identifier name: (identifier) @call.member)))
(macro_invocation macro: (identifier) @call)
(struct_expression name: (type_identifier) @call)
(field_expression field: (field_identifier) @ref.field)
(type_identifier) @ref
(scoped_type_identifier name: (type_identifier) @ref.member)
(use_declaration) @import.use
(mod_item name: (identifier) @import.relative !body)
"""

_JAVA = r"""
(class_declaration name: (identifier) @def.class)
(interface_declaration name: (identifier) @def.interface)
(enum_declaration name: (identifier) @def.enum)
(record_declaration name: (identifier) @def.class)
(annotation_type_declaration name: (identifier) @def.interface)
(method_declaration name: (identifier) @def.method)
(constructor_declaration name: (identifier) @def.method)
(compact_constructor_declaration name: (identifier) @def.method)
(method_invocation object: (_) name: (identifier) @call.member)
(method_invocation !object name: (identifier) @call)
(object_creation_expression type: (type_identifier) @call)
(object_creation_expression type: (generic_type (type_identifier) @call))
(field_access field: (identifier) @ref.field)
(type_identifier) @ref
(import_declaration (scoped_identifier) @import)
(import_declaration (identifier) @import)
"""

_KOTLIN = r"""
(class_declaration (type_identifier) @def.class)
(object_declaration (type_identifier) @def.class)
(companion_object (type_identifier) @def.class)
(function_declaration (simple_identifier) @def.function)
(type_alias (type_identifier) @def.type)
(call_expression . (simple_identifier) @call)
(call_expression . (navigation_expression (navigation_suffix (simple_identifier) @call)))
(navigation_suffix (simple_identifier) @ref.field)
(user_type (type_identifier) @ref)
(import_header (identifier) @import)
"""

_C_COMMON = r"""
(function_definition declarator: (function_declarator declarator: (identifier) @def.function))
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @def.function)))
(function_definition
  declarator: (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @def.function))))
(struct_specifier name: (type_identifier) @def.struct body: (_))
(union_specifier name: (type_identifier) @def.struct body: (_))
(enum_specifier name: (type_identifier) @def.enum body: (_))
(type_definition declarator: (type_identifier) @def.type)
(preproc_function_def name: (identifier) @def.macro)
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call.member))
(field_expression field: (field_identifier) @ref.field)
(type_identifier) @ref
(initializer_pair value: (identifier) @ref)
(initializer_list (identifier) @ref)
(argument_list (identifier) @ref)
(preproc_include path: (string_literal (string_content) @import))
(preproc_include path: (system_lib_string) @import)
"""

_C = _C_COMMON

_CPP = (
    _C_COMMON
    + r"""
(class_specifier name: (type_identifier) @def.class body: (_))
(namespace_definition name: (namespace_identifier) @def.module)
(function_definition declarator: (function_declarator declarator: (field_identifier) @def.method))
(function_definition
  declarator: (function_declarator declarator: (qualified_identifier scope: (_) @scope name: (identifier) @def.method)))
(function_definition
  declarator: (reference_declarator (function_declarator declarator: (qualified_identifier scope: (_) @scope name: (identifier) @def.method))))
(function_definition
  declarator: (pointer_declarator declarator: (function_declarator declarator: (qualified_identifier scope: (_) @scope name: (identifier) @def.method))))
(alias_declaration name: (type_identifier) @def.type)
(call_expression function: (qualified_identifier name: (identifier) @call.member))
(call_expression function: (template_function name: (identifier) @call))
(call_expression function: (qualified_identifier name: (template_function name: (identifier) @call)))
(call_expression function: (field_expression field: (template_method name: (field_identifier) @call)))
(new_expression type: (type_identifier) @call)
(qualified_identifier name: (type_identifier) @ref.member)
"""
)

_CSHARP = r"""
(class_declaration name: (identifier) @def.class)
(interface_declaration name: (identifier) @def.interface)
(struct_declaration name: (identifier) @def.struct)
(enum_declaration name: (identifier) @def.enum)
(record_declaration name: (identifier) @def.class)
(method_declaration name: (identifier) @def.method)
(constructor_declaration name: (identifier) @def.method)
(local_function_statement name: (identifier) @def.function)
(delegate_declaration name: (identifier) @def.type)
(namespace_declaration name: (_) @def.module)
(file_scoped_namespace_declaration name: (_) @def.filemodule)
(invocation_expression function: (identifier) @call)
(invocation_expression function: (member_access_expression name: (identifier) @call.member))
(invocation_expression function: (generic_name (identifier) @call))
(object_creation_expression type: (identifier) @call)
(object_creation_expression type: (generic_name (identifier) @call))
(object_creation_expression type: (qualified_name name: (identifier) @call.member))
(member_access_expression name: (identifier) @ref.field)
(base_list (identifier) @ref)
(base_list (generic_name (identifier) @ref))
(variable_declaration type: (identifier) @ref)
(variable_declaration type: (generic_name (identifier) @ref))
(parameter type: (identifier) @ref)
(parameter type: (generic_name (identifier) @ref))
(method_declaration returns: (identifier) @ref)
(property_declaration type: (identifier) @ref)
(type_argument_list (identifier) @ref)
(using_directive (qualified_name) @import)
(using_directive (identifier) @import)
"""

_RUBY = r"""
(class name: (constant) @def.class)
(class name: (scope_resolution name: (constant) @def.class))
(module name: (constant) @def.module)
(module name: (scope_resolution name: (constant) @def.module))
(method name: (_) @def.function)
(singleton_method name: (_) @def.function)
(call receiver: (_) method: [(identifier) (constant)] @call.member)
(call !receiver method: (identifier) @call)
(scope_resolution name: (constant) @ref.member)
(constant) @ref
(call
  method: (identifier) @_require (#any-of? @_require "require" "load")
  arguments: (argument_list . (string (string_content) @import)))
(call
  method: (identifier) @_require (#eq? @_require "require_relative")
  arguments: (argument_list . (string (string_content) @import.relative)))
"""

_PHP = r"""
(class_declaration name: (name) @def.class)
(interface_declaration name: (name) @def.interface)
(trait_declaration name: (name) @def.trait)
(enum_declaration name: (name) @def.enum)
(function_definition name: (name) @def.function)
(method_declaration name: (name) @def.method)
(namespace_definition name: (namespace_name) @def.module body: (_))
(namespace_definition name: (namespace_name) @def.filemodule !body)
(function_call_expression function: (name) @call)
(function_call_expression function: (qualified_name (name) @call))
(member_call_expression name: (name) @call.member)
(nullsafe_member_call_expression name: (name) @call.member)
(scoped_call_expression name: (name) @call.member)
(object_creation_expression (name) @call)
(object_creation_expression (qualified_name (name) @call))
(member_access_expression name: (name) @ref.field)
(named_type (name) @ref)
(named_type (qualified_name (name) @ref))
(base_clause (name) @ref)
(class_interface_clause (name) @ref)
(namespace_use_declaration) @import.use
(include_expression (string (string_content) @import.relative))
(require_once_expression (string (string_content) @import.relative))
(require_expression (string (string_content) @import.relative))
(include_once_expression (string (string_content) @import.relative))
"""

SOURCES: dict[str, str] = {
    "python": _PYTHON,
    "javascript": _JS,
    "typescript": _TS,
    "tsx": _TS,
    "go": _GO,
    "rust": _RUST,
    "java": _JAVA,
    "kotlin": _KOTLIN,
    "c": _C,
    "cpp": _CPP,
    "csharp": _CSHARP,
    "ruby": _RUBY,
    "php": _PHP,
}

_TOP_NODE = re.compile(r"\(\s*([a-z_]+)")


def definition_nodes(source: str) -> frozenset[str]:
    """The node types a `@def`/`@impl` pattern starts with: where a definition's name climbs to."""
    out: set[str] = set()
    depth = 0
    pattern = ""
    for ch in source:
        if depth == 0 and ch == "(":
            pattern = ""
        pattern += ch
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and pattern.startswith("(") and ("@def." in pattern or "@impl" in pattern):
            if m := _TOP_NODE.match(pattern):
                out.add(m.group(1))
            pattern = ""
    return frozenset(out)


class LanguageQuery:
    def __init__(self, language: str) -> None:
        self.query = Query(get_language(language), SOURCES[language])  # type: ignore[arg-type]
        self.definition_nodes = definition_nodes(SOURCES[language])


_compiled: dict[str, LanguageQuery] = {}
_lock = threading.Lock()


def query(language: str) -> LanguageQuery | None:
    """The compiled query of a language (once per process; a Query is read-only and shared)."""
    q = _compiled.get(language)
    if q is None and language in SOURCES:
        with _lock:
            q = _compiled.get(language)
            if q is None:
                q = _compiled[language] = LanguageQuery(language)
    return q
