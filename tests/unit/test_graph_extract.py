"""The code graph's reading of a file (ragls.graph.extract), language by language, from the same
parse the chunker makes: every chunked language yields its definitions (with their scope), its
uses (calls, member calls, type uses) and its imports (as path keys); hostile files stay bounded."""

from __future__ import annotations

import time

import pytest

from ragls.chunking import SUPPORTED_CODE_LANGUAGES, chunk_file
from ragls.graph.extract import MAX_REFS
from ragls.graph.imports import module_key, php_use_paths, rust_use_paths
from ragls.graph.model import REF_KINDS, FileGraph
from ragls.ingest.prepare import chunk_and_graph

# language -> (path, source, definitions (name, kind, scope), uses (name, kind), import keys)
SAMPLES: dict[str, tuple[str, str, set[tuple[str, str, str]], set[tuple[str, str]], set[str]]] = {
    "python": (
        "shop/cart.py",
        "from shop.pricing import tax_rate\nimport os.path\n\n"
        "class Cart(Base):\n    def total(self, item: Item) -> float:\n"
        "        self.items.append(item)\n        return tax_rate(os.path.join('a'))\n",
        {("Cart", "class", ""), ("total", "method", "Cart")},
        {
            ("tax_rate", "call"),
            ("tax_rate", "import"),
            ("append", "call"),
            ("Item", "reference"),
            ("Base", "reference"),
        },
        {"shop/pricing", "os/path"},
    ),
    "javascript": (
        "web/app.js",
        "import { debounce } from './debounce';\nconst fs = require('fs');\n\n"
        "class Ring extends Base {\n  push(item) { this.items.push(item); helper(item); }\n}\n"
        "function helper(x) { return debounce(x); }\nconst run = () => new Ring().push(1);\n",
        {("Ring", "class", ""), ("push", "method", "Ring"), ("helper", "function", ""), ("run", "function", "")},
        {("debounce", "call"), ("debounce", "import"), ("helper", "call"), ("Ring", "call"), ("Base", "reference")},
        {"web/debounce", "fs"},
    ),
    "typescript": (
        "web/src/app.ts",
        'import { Session } from "./session";\n\nexport interface Store { get(key: string): Token; }\n'
        "export class Ring<T> implements Store {\n  get(key: string): Token { return new Session(key).token; }\n}\n"
        "export function helper(r: Ring<number>): void { r.get('a'); }\n",
        {("Store", "interface", ""), ("get", "method", "Store"), ("Ring", "class", ""), ("helper", "function", "")},
        {("Session", "call"), ("Session", "import"), ("Token", "reference"), ("Ring", "reference"), ("get", "call")},
        {"web/src/session"},
    ),
    "tsx": (
        "web/src/view.tsx",
        'import { render } from "../render";\n\nexport function View(props: Props) {\n'
        "  return <div>{render(props.value)}</div>;\n}\n",
        {("View", "function", "")},
        {("render", "call"), ("render", "import"), ("Props", "reference"), ("value", "reference")},
        {"web/render"},
    ),
    "go": (
        "services/api/handler.go",
        'package api\n\nimport (\n\t"fmt"\n\t"example.com/shop/services/geo"\n)\n\n'
        "type Server struct{ limit int }\n\ntype Store interface{ Get(key string) Item }\n\n"
        "func (s *Server) Handle(p geo.Point) string {\n\treturn fmt.Sprint(geo.HaversineKm(p, p), s.limit)\n}\n",
        {
            ("Server", "struct", ""),
            ("Store", "interface", ""),
            ("Get", "method", "Store"),
            ("Handle", "method", "Server"),
        },
        {
            ("HaversineKm", "call"),
            ("Sprint", "call"),
            ("Point", "reference"),
            ("Item", "reference"),
            ("limit", "reference"),
        },
        {"fmt", "example.com/shop/services/geo"},
    ),
    "rust": (
        "native/src/main.rs",
        "use crate::ring::{RingBuffer, Mode as M};\nmod ring;\n\nstruct Wrapper { inner: RingBuffer }\n"
        "impl Wrapper {\n    fn push(&mut self, v: i32) { self.inner.push(v); }\n}\n"
        'fn main() { let mut b = RingBuffer::with_capacity(4); b.push(1); println!("{}", 1); }\n',
        {("Wrapper", "struct", ""), ("push", "method", "Wrapper"), ("main", "function", "")},
        {
            ("with_capacity", "call"),
            ("push", "call"),
            ("println", "call"),
            ("RingBuffer", "reference"),
            ("Mode", "import"),
        },
        {"ring/ringbuffer", "ring/mode", "native/src/ring"},
    ),
    "java": (
        "java/src/main/java/com/acme/Gateway.java",
        "package com.acme;\n\nimport com.acme.util.Clock;\nimport java.util.*;\n\n"
        "public class Gateway {\n    private final RateLimiter limiter = new RateLimiter(5);\n"
        "    public String handle(String r) { return limiter.tryAcquire() ? r : String.valueOf(Clock.now()); }\n}\n",
        {("Gateway", "class", ""), ("handle", "method", "Gateway")},
        {
            ("RateLimiter", "call"),
            ("RateLimiter", "reference"),
            ("tryAcquire", "call"),
            ("now", "call"),
            ("Clock", "import"),
        },
        {"com/acme/util/clock", "java/util"},
    ),
    "kotlin": (
        "app/src/Ring.kt",
        "package com.acme\n\nimport com.acme.geo.Distance\n\nclass Ring(val size: Int) : Base() {\n"
        "    fun push(item: Item) { items.add(item); helper(item) }\n}\n\n"
        "fun helper(x: Any): Double = Distance.between(x, 2)\n",
        {("Ring", "class", ""), ("push", "method", "Ring"), ("helper", "function", "")},
        {("add", "call"), ("helper", "call"), ("between", "call"), ("Item", "reference"), ("Distance", "import")},
        {"com/acme/geo/distance"},
    ),
    "c": (
        "native/c/main.c",
        '#include <stdio.h>\n#include "ring_buffer.h"\n\ntypedef struct ring { int size; } ring_t;\n\n'
        "static int helper(int x) { return x; }\n\nint main(void) {\n    ring_t r;\n"
        '    ring_push(&r, helper(1));\n    printf("%d", r.size);\n    return 0;\n}\n',
        {("ring_t", "type", ""), ("ring", "struct", ""), ("helper", "function", ""), ("main", "function", "")},
        {("ring_push", "call"), ("helper", "call"), ("printf", "call"), ("ring_t", "reference"), ("size", "reference")},
        {"stdio", "ring_buffer"},
    ),
    "cpp": (
        "src/ring.cpp",
        '#include "geo/distance.hpp"\n\nnamespace acme {\nclass Ring : public Base {\npublic:\n'
        "    void push(int item);\n    int size() const { return items_.size(); }\n};\n\n"
        "void Ring::push(int item) { helper(item); geo::distance(item, 2); }\n}\n",
        {
            ("acme", "module", ""),
            ("Ring", "class", "acme"),
            ("size", "method", "acme.Ring"),
            ("push", "method", "acme.Ring"),
        },
        {("helper", "call"), ("distance", "call"), ("size", "call"), ("Base", "reference")},
        {"geo/distance"},
    ),
    "csharp": (
        "src/Ring.cs",
        "using Acme.Geo;\n\nnamespace Acme.Ring\n{\n    public class Ring : Base, IStore\n    {\n"
        "        public void Push(Item item) { items.Add(item); Helper(item); }\n"
        "        static double Helper(object x) => Distance.Between(x, new Point());\n    }\n}\n",
        {("Acme.Ring", "module", ""), ("Ring", "class", "Acme.Ring"), ("Push", "method", "Acme.Ring.Ring")},
        {("Add", "call"), ("Helper", "call"), ("Between", "call"), ("Point", "call"), ("IStore", "reference")},
        {"acme/geo"},
    ),
    "ruby": (
        "lib/acme/ring.rb",
        "require 'set'\nrequire_relative 'geo/distance'\n\nmodule Acme\n  class Ring < Base\n"
        "    def push(item)\n      @items.push(item)\n      helper(item)\n    end\n  end\n\n"
        "  def helper(x)\n    Geo::Distance.between(x, 2)\n  end\nend\n",
        {
            ("Acme", "module", ""),
            ("Ring", "class", "Acme"),
            ("push", "method", "Acme.Ring"),
            ("helper", "function", "Acme"),
        },
        {("push", "call"), ("helper", "call"), ("between", "call"), ("Base", "reference"), ("Distance", "reference")},
        {"set", "lib/acme/geo/distance"},
    ),
    "php": (
        "src/Ring.php",
        "<?php\nnamespace Acme\\Ring;\n\nuse Acme\\Geo\\Distance;\nuse Acme\\Util\\{Helpers, Strings as S};\n\n"
        "class Ring extends Base\n{\n    public function push(Item $item): void\n    {\n"
        "        $this->items[] = $item;\n        helper($item);\n        Distance::between($item, 2);\n    }\n}\n",
        {("Acme.Ring", "module", ""), ("Ring", "class", "Acme.Ring"), ("push", "method", "Acme.Ring.Ring")},
        {
            ("helper", "call"),
            ("between", "call"),
            ("Item", "reference"),
            ("items", "reference"),
            ("Distance", "import"),
        },
        {"acme/geo/distance", "acme/util/helpers", "acme/util/strings"},
    ),
}


def _graph(language: str, path: str, source: str) -> FileGraph:
    _chunks, graph = chunk_and_graph(path, language, source)
    assert graph is not None
    return graph


def test_every_chunked_language_has_a_sample() -> None:
    assert set(SAMPLES) == set(SUPPORTED_CODE_LANGUAGES)


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_definitions_uses_and_imports_of_each_language(language: str) -> None:
    path, source, defs, uses, keys = SAMPLES[language]
    g = _graph(language, path, source)
    got_defs = {(d[0], d[1], d[2]) for d in g.defs}
    assert defs <= got_defs, defs - got_defs
    got_uses = {(r[0], REF_KINDS[r[1]]) for r in g.refs}
    assert uses <= got_uses, uses - got_uses
    got_keys = {i[1] for i in g.imports}
    assert keys <= got_keys, keys - got_keys
    # Lines are 1-based and inside the file; a definition's end is not before its start.
    n = source.count("\n") + 1
    assert all(1 <= d[3] <= d[4] <= n for d in g.defs)
    assert all(1 <= int(line) <= n for r in g.refs for line in r[3].split())
    # A definition's own name is no use of itself.
    assert not any(r[0] == "Cart" and r[1] == REF_KINDS.index("reference") for r in g.refs if language == "python")


def test_the_chunks_are_those_of_chunk_file() -> None:
    """Reading the graph changes nothing of the chunks (the same parse, the same result)."""
    for language, (path, source, *_rest) in SAMPLES.items():
        chunks, _ = chunk_and_graph(path, language, source)
        assert chunks == chunk_file(path, language, source), language


def test_uses_of_a_name_are_one_row_with_their_lines() -> None:
    g = _graph("python", "m.py", "def fn():\n    pass\n\nfn()\nfn()\nx = 1\nfn()\nx()\n")
    rows = [r for r in g.refs if r[0] == "fn"]
    assert rows == [("fn", REF_KINDS.index("call"), "", "4 5 7")]
    assert not [r for r in g.refs if r[0] == "x"]  # a one-letter name: a local, no graph edge


def test_a_qualifier_is_kept_for_member_calls() -> None:
    g = _graph("go", "a.go", "package a\n\nfunc F() { geo.HaversineKm(1, 2) }\n")
    assert ("HaversineKm", REF_KINDS.index("call"), "geo", "3") in g.refs


def test_markdown_and_plain_text_have_no_graph() -> None:
    assert chunk_and_graph("README.md", "markdown", "# Title\n\nText.\n")[1] is None
    assert chunk_and_graph("notes.txt", "text", "plain words\n")[1] is None


def test_a_file_of_100k_calls_is_read_within_its_budget() -> None:
    source = "".join(f"f{i}()\n" for i in range(100_000))
    t0 = time.monotonic()
    g = _graph("python", "gen.py", source)
    took = time.monotonic() - t0
    assert g.truncated
    names = {r[0] for r in g.refs}
    assert "f0" in names and "f99999" not in names
    assert MAX_REFS <= len(g.refs) <= 2 * MAX_REFS
    one = _graph("python", "one.py", "go()\n" * 100_000)
    assert one.truncated and len(one.refs) == 1
    assert one.refs[0][3].split() == [str(n) for n in range(1, 1_001)]  # lines kept: the first 1,000
    assert took < 30, took  # the chunking of 100k lines included; the graph stops at its budget


def test_deeply_nested_code_costs_no_recursion() -> None:
    depth = 3_000
    source = "".join(f"function f{i}() {{\n" for i in range(depth)) + "go();\n" + "}\n" * depth
    g = _graph("javascript", "deep.js", source)
    assert ("f0", "function", "") in {(d[0], d[1], d[2]) for d in g.defs}
    assert next(d for d in g.defs if d[0] == "f3")[2] == "f0.f1.f2"
    # A scope keeps its innermost names: deep nesting costs no quadratic memory.
    assert next(d for d in g.defs if d[0] == "f2999")[2] == ".".join(f"f{i}" for i in range(2991, 2999))
    assert any(r[0] == "go" for r in g.refs)


def test_long_names_and_statements_are_dropped() -> None:
    long = "x" * 5_000
    g = _graph("python", "m.py", f"def {long}():\n    {long}()\n\nimport {'a.' * 2000}b\n")
    assert not g.defs and not g.refs
    assert all(len(i[0]) <= 300 for i in g.imports)


@pytest.mark.parametrize(
    ("language", "module", "rel_dir", "relative", "key"),
    [
        ("python", "billing.invoice", "x", False, "billing/invoice"),
        ("python", "..core.db", "pkg/sub", False, "pkg/core/db"),
        ("python", ".", "pkg", False, "pkg"),
        ("typescript", "./geo", "web/src", False, "web/src/geo"),
        ("typescript", "../lib/x.js", "web/src", False, "web/lib/x"),
        ("typescript", "@/components/Button", "web/src", False, "components/button"),
        ("go", "example.com/shop/services/geo", "x", False, "example.com/shop/services/geo"),
        ("rust", "crate::ring::RingBuffer", "src", False, "ring/ringbuffer"),
        ("rust", "inner", "native/src", True, "native/src/inner"),
        ("java", "com.acme.util.Clock", "x", False, "com/acme/util/clock"),
        ("c", "ring_buffer.h", "native/c", False, "ring_buffer"),
        ("c", "../include/ring.h", "native/c", False, "native/include/ring"),
        ("php", "Acme\\Geo\\Distance", "x", False, "acme/geo/distance"),
        ("ruby", "geo/distance", "lib", True, "lib/geo/distance"),
        ("python", "../../../../etc/passwd", "a", False, "etc/passwd"),
    ],
)
def test_module_keys(language: str, module: str, rel_dir: str, relative: bool, key: str) -> None:
    assert module_key(language, module, rel_dir, relative) == key


def test_use_statements() -> None:
    assert rust_use_paths("pub(crate) use a::b::{c, d::{e, f as g}, *};") == [
        "a::b::c",
        "a::b::d::e",
        "a::b::d::f",
        "a::b::*",
    ]
    assert rust_use_paths("use " + "{" * 5_000 + "x" + "}" * 5_000 + ";") == []
    assert php_use_paths("use A\\B\\{C, D as E};") == ["A\\B\\C", "A\\B\\D"]
    assert php_use_paths("use function A\\f, B\\C as D;") == ["A\\f", "B\\C"]


def test_names_used_as_values_are_uses() -> None:
    """What a language server counts and calls and types miss (found against pyright, clangd and
    typescript-language-server: docs/evaluation.md): a class or constant passed, raised or
    compared (Python, capitalised: a lowercase argument is mostly a local), an exception caught,
    a name in `__all__`, a decorator, a union in an annotation; a C function stored in a table
    or passed as a callback; a JS default import and a re-export."""

    def uses(language: str, path: str, source: str) -> set[str]:
        return {r[0] for r in _graph(language, path, source).refs}

    py = uses(
        "python",
        "m.py",
        '__all__ = ["check_path"]\nALIAS = FUNCTIONDEF\n\n@in_annotation\ndef f(a: Ok | None | Err) -> None:\n'
        "    try:\n        return isinstance(a, Annotation) and a in (ImportKey.ALIAS,)\n"
        "    except (UnsupportedEncoding, OSError):\n        return local_value(a, other)\n",
    )
    assert {"check_path", "FUNCTIONDEF", "in_annotation", "Ok", "Err", "Annotation", "ImportKey"} <= py, py
    assert {"UnsupportedEncoding", "OSError"} <= py and "other" not in py, py
    c = uses(
        "c",
        "cmd.c",
        'const struct cmd_entry e = {\n  .name = "join",\n  .exec = cmd_join_exec\n};\n'
        "static void *table[] = { input_enter, input_exit };\nvoid f(void) { pthread_once(&once, seed_init); }\n",
    )
    assert {"cmd_join_exec", "input_enter", "input_exit", "seed_init"} <= c, c
    js = _graph(
        "javascript", "m.js", "import chainResult from './_chainResult.js';\nexport { keys } from './keys.js';\n"
    )
    assert {(r[0], REF_KINDS[r[1]]) for r in js.refs} >= {("chainResult", "import"), ("keys", "import")}, js.refs
