"""Chunking per language: every supported grammar yields function/method chunks with
qualified symbols and exact 1-based line ranges."""

from __future__ import annotations

import pytest

from ragls.chunking import MAX_CHUNKS_PER_FILE, SUPPORTED_CODE_LANGUAGES, SYNTAX_MAX_CHARS, TooManyChunks, chunk_file
from ragls.config import IndexingSettings

SAMPLES: dict[str, tuple[str, str, set[str]]] = {
    "python": (
        "a.py",
        '''import os

class Greeter:
    """Says hello."""
    def __init__(self, name):
        self.name = name
    def greet(self):
        return "hi " + self.name

@decorator
def top_level(x):
    return x * 2
''',
        {"Greeter.__init__", "Greeter.greet", "top_level"},
    ),
    "javascript": (
        "a.js",
        """// adds numbers
function add(a, b) { return a + b; }
class Cart {
  total() { return 1; }
  clear() { this.items = []; }
}
const mul = (a, b) => a * b;
export function exported(x) { return x; }
""",
        {"add", "Cart.total", "Cart.clear", "mul", "exported"},
    ),
    "typescript": (
        "a.ts",
        """export class Repo<T> {
  private items: T[] = [];
  find(id: string): T | undefined { return undefined; }
  save(item: T): void { this.items.push(item); }
}
export const parse = (s: string): number => Number(s);
function helper(): void {}
""",
        {"Repo.find", "Repo.save", "parse", "helper"},
    ),
    "tsx": (
        "a.tsx",
        """export function Button(props: { label: string }) {
  return <button>{props.label}</button>;
}
export const Card = () => <div />;
""",
        {"Button", "Card"},
    ),
    "go": (
        "a.go",
        """package p

// Sum adds.
func Sum(a, b int) int { return a + b }

func (s *Store) Get(id string) string { return id }

type Store struct{ m map[string]string }
""",
        {"Sum", "Store.Get", "Store"},
    ),
    "rust": (
        "a.rs",
        """use std::fmt;

pub fn parse(s: &str) -> i32 { 0 }

impl Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
    fn other(&self) {}
}
""",
        {"parse", "Point.fmt", "Point.other"},
    ),
    "java": (
        "A.java",
        """package x;
public class Account {
    private int balance;
    public Account(int b) { balance = b; }
    public void deposit(int amount) { balance += amount; }
    public int getBalance() { return balance; }
}
""",
        {"Account", "Account.Account", "Account.deposit", "Account.getBalance"},
    ),
    "kotlin": (
        "a.kt",
        """fun topLevel(x: Int): Int = x + 1
class Box(val v: Int) {
    fun double(): Int = v * 2
}
""",
        {"topLevel", "Box.double"},
    ),
    "c": (
        "a.c",
        """#include <stdio.h>
static int add(int a, int b) { return a + b; }
int *make(void) { return 0; }
""",
        {"add", "make"},
    ),
    "cpp": (
        "a.cpp",
        """namespace geo {
int area(int w, int h) { return w * h; }
}
int Shape::perimeter() const { return 0; }
template <typename T> T maxOf(T a, T b) { return a > b ? a : b; }
""",
        {"geo.area", "Shape.perimeter", "maxOf"},
    ),
    "csharp": (
        "a.cs",
        """namespace Shop {
  public class Order {
    public decimal Total() { return 0; }
    public Order() {}
  }
}
""",
        {"Shop.Order.Total", "Shop.Order.Order"},
    ),
    "ruby": (
        "a.rb",
        """module Billing
  class Invoice
    def total
      1
    end
    def self.build
      new
    end
  end
end
""",
        {"Billing.Invoice.total", "Billing.Invoice.build"},
    ),
    "php": (
        "a.php",
        """<?php
function helper($x) { return $x; }
class Cart {
    public function add($item) { $this->items[] = $item; }
}
""",
        {"helper", "Cart.add"},
    ),
}


def test_every_listed_language_has_a_sample() -> None:
    assert set(SAMPLES) == set(SUPPORTED_CODE_LANGUAGES)


def test_small_class_stays_whole() -> None:
    path, src, _ = SAMPLES["java"]
    (only,) = [c for c in chunk_file(path, "java", src) if c.kind == "class"]
    assert only.symbol == "Account" and "getBalance" in only.text


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_language_symbols_and_ranges(language: str) -> None:
    path, src, expected = SAMPLES[language]
    # small_class_chars=0 splits every class, so method naming is what is checked here.
    chunks = chunk_file(path, language, src, IndexingSettings(small_class_chars=0))
    symbols = {c.symbol for c in chunks}
    assert expected <= symbols, (language, symbols)
    lines = src.split("\n")
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
        assert c.language == language


def test_large_class_becomes_header_plus_methods() -> None:
    body = "\n".join(f"    def method_{i}(self):\n        return {i} + {i} * 2 - {i} // 3\n" for i in range(30))
    src = f"class Big:\n    '''Many methods.'''\n    field = 1\n\n{body}"
    chunks = chunk_file("big.py", "python", src)
    kinds = {c.kind for c in chunks}
    assert "class_header" in kinds and "method" in kinds
    header = next(c for c in chunks if c.kind == "class_header")
    assert "field = 1" in header.text and "def method_0" not in header.text
    assert {f"Big.method_{i}" for i in range(30)} <= {c.symbol for c in chunks}
    assert all(c.parent == "Big" for c in chunks if c.kind == "method")


def test_oversize_function_is_split_and_keeps_its_header() -> None:
    body = "\n".join(f"    x{i} = compute({i}, 'padding to make the line longer than usual')" for i in range(200))
    src = f"def huge(a, b):\n{body}\n    return a\n"
    s = IndexingSettings(max_chunk_chars=2000)
    chunks = chunk_file("h.py", "python", src, s)
    assert len(chunks) > 3
    assert all(len(c.text) <= 2000 for c in chunks)
    assert all(c.symbol == "huge" and c.signature == "def huge(a, b):" for c in chunks)
    # A later piece does not start with the signature, so the embedded text repeats it.
    assert chunks[2].embedding_text().startswith("huge\ndef huge(a, b):\n")
    assert chunks[0].embedding_text().startswith("huge\ndef huge(a, b):\n    x0 =")
    covered = sorted((c.start_line, c.end_line) for c in chunks)
    assert covered[0][0] == 1 and covered[-1][1] == 202


def test_doc_comment_attaches_to_following_definition() -> None:
    src = "package p\n\n// Sum adds two numbers.\n// It never overflows.\nfunc Sum(a, b int) int { return a + b }\n"
    (fn,) = [c for c in chunk_file("a.go", "go", src) if c.symbol == "Sum"]
    assert fn.start_line == 3 and "never overflows" in fn.text


def test_markdown_sections_carry_heading_path() -> None:
    src = "# Guide\n\nintro\n\n## Install\n\nrun it\n\n```sh\n# not a heading\n```\n\n## Use\n\ncall it\n"
    chunks = chunk_file("g.md", "markdown", src)
    assert [c.symbol for c in chunks] == ["Guide", "Guide > Install", "Guide > Use"]
    assert "# not a heading" in chunks[1].text


def test_text_windows_overlap() -> None:
    src = "\n".join(f"line {i}" for i in range(100))
    chunks = chunk_file("notes.txt", "text", src, IndexingSettings(window_lines=40, window_overlap=10))
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 40), (31, 70), (61, 100)]


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_broken_source_never_raises(language: str) -> None:
    path, src, _ = SAMPLES[language]
    broken = src[: len(src) // 2] + "\n}}}((( <<< \x00 ;;; def class fn {\n" + src[len(src) // 3 :]
    chunks = chunk_file(path, language, broken)
    assert chunks and all(c.text.strip() for c in chunks)


def test_typescript_overloads_join_their_implementation() -> None:
    src = """export function concat(a: string): string;
export function concat(a: number, b: number): number;

export function concat(...args: any[]): unknown {
  return args.join('');
}
export function lonely(a: string): void;
class Box {
  put(a: string): void;
  put(a: number): void;
  put(a: any) { this.items.push(a); }
  size(): number { return this.items.length; }
}
"""
    chunks = chunk_file("a.ts", "typescript", src, IndexingSettings(small_class_chars=0))
    by = {(c.symbol, c.start_line, c.end_line) for c in chunks}
    assert ("concat", 1, 6) in by  # signatures + body, one chunk
    assert ("lonely", 7, 7) in by  # a signature without a body stays on its own
    assert ("Box.put", 9, 11) in by and ("Box.size", 12, 12) in by
    header = next(c for c in chunks if c.kind == "class_header")
    assert header.end_line < 9  # the header stops before the first overload


def test_default_exported_anonymous_function_is_named_after_its_file() -> None:
    src = "import x from './x';\n\nexport default (raw) => {\n  return x(raw);\n};\n"
    chunks = chunk_file("lib/helpers/parseHeaders.js", "javascript", src)
    fn = next(c for c in chunks if c.kind == "function")
    assert (fn.symbol, fn.start_line, fn.end_line) == ("parseHeaders", 3, 5)
    index = chunk_file("lib/index.js", "javascript", "export default function () {\n  return 1;\n}\n")
    assert [c.symbol for c in index if c.kind == "function"] == ["default"]


# -- C++ headers, export macros, wrapped JS functions (issue 13 chunking misses) -------------


def test_cpp_header_with_h_suffix_is_chunked_as_cpp() -> None:
    from ragls.text.languages import language_of, refine_language

    header = "#pragma once\nnamespace lib {\nclass Parser {\n  public:\n    int parse(int x) { return x; }\n};\n}\n"
    assert language_of("include/parser.h") == "c"
    assert refine_language("include/parser.h", "c", header) == "cpp"
    assert refine_language("include/yaml.h", "c", "typedef struct yaml_s { int x; } yaml_t;\n") == "c"
    assert refine_language("src/x.c", "c", header) == "c"  # only headers are ambiguous
    for suffix in (".hpp", ".hh", ".hxx", ".inl", ".ipp", ".tpp"):
        assert language_of(f"include/impl{suffix}") == "cpp", suffix
    chunks = chunk_file("include/parser.h", "c", header)
    assert {c.language for c in chunks} == {"cpp"}
    assert any(c.symbol == "lib.Parser" for c in chunks)


def test_ruby_by_other_names_and_dotnet_project_files() -> None:
    from ragls.text.languages import is_code, language_of

    for rel in ("lib/tasks/release.rake", "rack.gemspec", "config.ru", "Guardfile"):
        assert language_of(rel) == "ruby", rel
    task = 'namespace :release do\n  desc "Tag"\n  task :tag do\n    sh "git tag v1"\n  end\nend\n'
    assert chunk_file("lib/tasks/release.rake", "ruby", task)
    # Where a .NET project's packages are declared, and Java's key=value settings: configuration.
    for rel in ("src/App/App.csproj", "Directory.Build.props", "build/Common.targets", "app.properties"):
        lang = language_of(rel)
        assert lang is not None and not is_code(lang), rel


def test_export_macros_do_not_hide_classes_and_methods() -> None:
    members = "\n".join(f"    void set_level{i}(int level) {{ level_ = level + {i}; }}" for i in range(30))
    header = f"namespace spd {{\nclass SPD_API logger {{\npublic:\n{members}\n    int level_;\n}};\n}}\n"
    chunks = chunk_file("logger.h", "cpp", header)
    symbols = {c.symbol for c in chunks}
    assert "spd.logger.set_level0" in symbols and "spd.logger.set_level29" in symbols
    # The text is the file's own, macro included.
    assert any("class SPD_API logger" in c.text for c in chunks)
    inl = "SPD_INLINE void logger::flush() SPD_NOEXCEPT\n{\n    flush_();\n}\n"
    (only,) = chunk_file("logger-inl.h", "cpp", inl)
    assert only.kind == "function" and only.symbol == "logger.flush" and only.text.startswith("SPD_INLINE")
    yaml = "YAML_DECLARE(int)\nyaml_parser_initialize(yaml_parser_t *parser)\n{\n    return 1;\n}\n"
    (init,) = chunk_file("api.c", "c", yaml)
    assert init.symbol == "yaml_parser_initialize" and (init.start_line, init.end_line) == (1, 5)


def test_functions_wrapped_in_calls_are_function_chunks() -> None:
    ramda = (
        'var _curry2 = /*#__PURE__*/require("./internal/_curry2.js");\n'
        "var gt = /*#__PURE__*/_curry2(function gt(a, b) {\n  return a > b;\n});\n"
        "module.exports = gt;\n"
    )
    chunks = chunk_file("gt.js", "javascript", ramda)
    # One chunk named after the function; the require/export plumbing is not a chunk.
    assert [(c.kind, c.symbol, c.start_line, c.end_line) for c in chunks] == [("function", "gt", 2, 4)]
    tsx = "export const Button = forwardRef((props: Props, ref) => {\n  return <View ref={ref} />;\n});\n"
    (button,) = chunk_file("Button.tsx", "tsx", tsx)
    assert button.kind == "function" and button.symbol == "Button"


def test_short_go_methods_carry_their_receiver_type_as_context() -> None:
    go = (
        "package log\n\n// Logger writes entries to an output with a minimum level.\ntype Logger struct {\n\tLevel int\n}\n\n"
        "func (l *Logger) SetLevel(level int) {\n\tl.Level = level\n}\n\nfunc New() *Logger {\n\treturn &Logger{}\n}\n"
    )
    by_symbol = {c.symbol: c for c in chunk_file("logger.go", "go", go)}
    set_level = by_symbol["Logger.SetLevel"]
    assert set_level.signature == (
        "type Logger struct // Logger writes entries to an output with a minimum level.\n"
        "func (l *Logger) SetLevel(level int) {"
    )
    assert set_level.embedding_text().startswith("Logger.Set Level\ntype Logger struct // Logger writes entries")
    assert by_symbol["New"].signature == "func New() *Logger {"  # no receiver, no context
    # Long definitions speak for themselves, and Rust methods keep their own first line
    # (the impl header was measured and not kept).
    long_body = "\n".join(f"\tx{i} := {i}" for i in range(20))
    long = f"package log\n\ntype Logger struct{{}}\n\nfunc (l *Logger) Big() {{\n{long_body}\n}}\n"
    assert {c.symbol: c for c in chunk_file("big.go", "go", long)}["Logger.Big"].signature == "func (l *Logger) Big() {"
    body = "\n".join(f"    pub fn get{i}(&self) -> usize {{\n        self.len + {i}\n    }}" for i in range(40))
    rust = f"impl<A: Array> Extend<A::Item> for SmallVec<A> {{\n{body}\n}}\n"
    first = next(c for c in chunk_file("lib.rs", "rust", rust) if c.kind == "method")
    assert first.signature == "pub fn get0(&self) -> usize {"


def test_one_file_stays_within_its_budget() -> None:
    """Issue 51: whatever the settings allow, a file past SYNTAX_MAX_CHARS is not parsed (its tree
    would take ~20x its text in memory) but split into line windows, and one past
    MAX_CHUNKS_PER_FILE chunks is refused whole."""
    fn = "def handler_{i}(request):\n    return respond(request, {i})\n\n\n"
    small = "".join(fn.format(i=i) for i in range(200))
    assert {c.kind for c in chunk_file("a.py", "python", small)} == {"function"}
    big = "".join(fn.format(i=i) for i in range(SYNTAX_MAX_CHARS // 40))
    assert len(big) > SYNTAX_MAX_CHARS
    assert {c.kind for c in chunk_file("a.py", "python", big)} == {"text"}  # windows, no tree
    log = "".join(f"{i} GET /orders 200\n" for i in range(45 * MAX_CHUNKS_PER_FILE))
    with pytest.raises(TooManyChunks):
        chunk_file("access.txt", "text", log)


def test_include_guards_preprocessor_branches_and_namespace_macros_hide_no_definition() -> None:
    """A C/C++ header's include guard wraps every definition in it; `#ifdef` branches hold real
    code (C#'s `#if UNITY_EDITOR` too); a namespace opened by a macro alone on its line
    (`LIB_NAMESPACE_BEGIN`) is no namespace to the grammar. Each read as code swallowed the
    whole file into one declaration chunk."""
    body = (
        "template <typename T>\nclass Buffer {\npublic:\n    std::size_t size() const { return n_; }\n"
        "private:\n    std::size_t n_ = 0;\n};\n\n"
        "//! Swaps two buffers.\ntemplate <typename T>\ninline void swap(Buffer<T>& a, Buffer<T>& b) {\n"
        "    auto t = a;\n    a = b;\n    b = t;\n}\n"
    )
    for wrapped in (
        f"#ifndef LIB_H\n#define LIB_H\nnamespace lib {{\n{body}}}\n#endif\n",
        f"#ifndef LIB_H\n#define LIB_H\nLIB_NAMESPACE_BEGIN\n{body}LIB_NAMESPACE_END\n#endif\n",
        f"#if defined(_WIN32)\n{body}#else\nint other(void) {{ return 1; }}\n#endif\n",
    ):
        kinds = {(c.kind, (c.symbol or "").split(".")[-1]) for c in chunk_file("lib.hpp", "cpp", wrapped)}
        assert ("class", "Buffer") in kinds and ("function", "swap") in kinds, (wrapped, kinds)
    c_code = "#ifndef P_H\n#define P_H\nYAML_DECLARE(int)\nyaml_parser_initialize(yaml_parser_t *p)\n{\n    return 1;\n}\n#endif\n"
    chunks = chunk_file("p.c", "c", c_code)
    assert [(c.kind, c.symbol) for c in chunks if c.kind == "function"] == [("function", "yaml_parser_initialize")]
    assert chunks[-1].text.startswith("YAML_DECLARE(int)")  # the text is the file's own
    cs = (
        "namespace Game {\n#if UNITY_EDITOR\n    public class Tool {\n        public int Run(int x) {\n"
        "            return x + 1;\n        }\n    }\n#endif\n}\n"
    )
    assert any(c.symbol and c.symbol.endswith("Tool") for c in chunk_file("Tool.cs", "csharp", cs))
