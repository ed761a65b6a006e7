"""The code graph's rows in a real manifest (SQLite) and the answers read back from them: files
prepared as the indexer prepares them, committed with their records, replaced one file at a
time, removed with their records; references and relations resolved by name and import scope."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from ragls.config import Settings
from ragls.graph.read import GraphReader
from ragls.graph.relations import Graph, references_of
from ragls.graph.resolve import PathIndex
from ragls.ingest.prepare import FileJob, prepare_file
from ragls.store.manifest import LEXICAL, FileRecord, Manifest
from ragls.text.languages import language_of

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "graph"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURE, tmp_path / "ws"))


def _put(manifest: Manifest, root: Path, rels: list[str]) -> None:
    s = Settings()
    recs, graphs = [], {}
    for rel in rels:
        language = language_of(rel)
        assert language is not None
        p = prepare_file(str(root), FileJob(rel, language), s.indexing, s.max_file_bytes)
        recs.append(FileRecord(rel, p.digest, p.size, p.mtime_ns, language, LEXICAL, [], []))
        graphs[rel] = p.graph
    manifest.put_many(recs, graphs)


def _all(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and language_of(p.name))


def _rows(db: Path, table: str, path: str) -> int:
    with sqlite3.connect(db) as c:
        (n,) = c.execute(
            f"SELECT COUNT(*) FROM {table} t JOIN graph_files f ON f.id = t.file WHERE f.path = ?",
            (path,),
        ).fetchone()
    return int(n)


def _indexed(tmp_path: Path, files: dict[str, str]) -> Path:
    """These files (path -> text) written to a folder and put in a manifest: its database."""
    root = tmp_path / "ws"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    db = tmp_path / "manifest.sqlite"
    manifest = Manifest(db)
    _put(manifest, root, _all(root))
    manifest.close()
    return db


def _refs(db: Path, symbol: str, path: str | None = None) -> set[tuple[str, int, str | None, str]]:
    return {(loc.path, loc.line, loc.symbol, loc.kind) for loc in references_of(db, symbol, path)}


def test_rows_follow_each_file_and_answer_references(ws: Path, tmp_path: Path) -> None:
    db = tmp_path / "manifest.sqlite"
    manifest = Manifest(db)
    _put(manifest, ws, _all(ws))
    assert _refs(db, "tax_rate") == {
        ("shop/cart.py", 3, None, "import"),
        ("shop/cart.py", 14, "Cart.total", "call"),
    }
    assert _refs(db, "Cart.total") == {("shop/checkout.py", 11, "checkout", "call")}
    # An ambiguous name: each use resolves to the definition its file imports, or its own.
    assert _refs(db, "render", "shop/pricing.py") == {
        ("shop/checkout.py", 4, None, "import"),
        ("shop/checkout.py", 11, "checkout", "call"),
    }
    assert _refs(db, "render", "admin/report.py") == {("admin/report.py", 9, "report", "call")}
    assert _refs(db, "render", "tools/fmt.py") == set()

    # A saved file replaces its own rows only.
    others = {p: _rows(db, "graph_refs", p) for p in ("shop/cart.py", "admin/report.py")}
    (ws / "shop" / "checkout.py").write_text(
        "from shop.cart import Cart\n\n\ndef checkout(prices: list[float]) -> float:\n    return Cart().total()\n"
    )
    _put(manifest, ws, ["shop/checkout.py"])
    assert _refs(db, "render", "shop/pricing.py") == set()
    assert _refs(db, "Cart.total") == {("shop/checkout.py", 5, "checkout", "call")}
    assert {p: _rows(db, "graph_refs", p) for p in others} == others

    # A file with uses and no definition or import (a script) is rows of one table only.
    (ws / "run_all.py").write_text("checkout([1.0])\nreport()\n")
    _put(manifest, ws, ["run_all.py"])
    assert ("run_all.py", 2, None, "call") in _refs(db, "report")

    # A removed file takes its rows with it; its definitions no longer resolve anything.
    manifest.remove(["shop/pricing.py"])
    assert _rows(db, "graph_defs", "shop/pricing.py") == 0
    assert _refs(db, "tax_rate") == {("shop/cart.py", 3, None, "import"), ("shop/cart.py", 14, "Cart.total", "call")}
    with GraphReader(db) as reader:
        assert not reader.has_file("shop/pricing.py")
        assert reader.definitions("tax_rate") == []
    manifest.clear()
    with GraphReader(db) as reader:
        assert reader.files() == []
    manifest.close()


def test_related_lists_candidates_callers_callees_and_imports(ws: Path, tmp_path: Path) -> None:
    db = tmp_path / "manifest.sqlite"
    manifest = Manifest(db)
    _put(manifest, ws, _all(ws))
    manifest.close()
    with GraphReader(db) as reader:
        g = Graph(reader, PathIndex(reader.files()))
        seen_from_checkout = g.related("render", "shop/checkout.py", 10)
        assert [d.path for d in seen_from_checkout.definition] == ["shop/pricing.py", "admin/report.py", "tools/fmt.py"]
        assert [(c.path, c.symbol) for c in seen_from_checkout.callers] == [("shop/checkout.py", "checkout")]
        seen_from_admin = g.related("render", "admin/report.py", 10)
        assert seen_from_admin.definition[0].path == "admin/report.py"
        assert any("3 definitions" in w for w in seen_from_admin.warnings)

        checkout = g.related("checkout", None, 10)
        assert {(c.symbol, c.path) for c in checkout.callees} == {
            ("Cart", "shop/cart.py"),
            ("Cart.add", "shop/cart.py"),
            ("Cart.total", "shop/cart.py"),
            ("render", "shop/pricing.py"),
        }
        assert {i.path for i in checkout.imports} == {"shop/cart.py", "shop/pricing.py"}

        pricing = g.related(None, "shop/pricing.py", 10)
        assert [d.symbol for d in pricing.definition] == ["tax_rate", "render"]
        assert {(c.path, c.symbol) for c in pricing.callers} == {
            ("shop/cart.py", "Cart.total"),
            ("shop/checkout.py", "checkout"),
        }
        assert {(i.path, i.line) for i in pricing.imported_by} == {("shop/cart.py", 3), ("shop/checkout.py", 4)}

        go = g.related("HaversineKm", None, 10)
        assert [(i.path, i.symbol) for i in go.imported_by] == [
            ("services/api/handler.go", "example.com/shop/services/geo")
        ]
        c = g.related("ring_push", None, 10)
        assert [d.path for d in c.definition] == ["native/c/ring_buffer.c"]  # the prototype is no definition
        assert [(x.path, x.symbol) for x in c.callers] == [("native/c/main.c", "main")]


def test_path_index_resolves_modules_packages_and_folders() -> None:
    paths = PathIndex(
        [
            "shop/__init__.py",
            "shop/cart.py",
            "services/geo/distance.go",
            "services/geo/point.go",
            "src/main/java/com/acme/util/Clock.java",
            "lib/path.py",
        ]
    )
    assert paths.resolve("shop/cart") == ["shop/cart.py"]
    assert paths.resolve("shop") == ["shop/__init__.py"]  # a package is its __init__
    assert sorted(paths.resolve("example.com/shop/services/geo")) == [
        "services/geo/distance.go",
        "services/geo/point.go",
    ]
    assert paths.resolve("com/acme/util/clock") == ["src/main/java/com/acme/util/Clock.java"]
    assert paths.resolve("com/acme/util/clock/now") == ["src/main/java/com/acme/util/Clock.java"]  # a member
    assert paths.resolve("os/path") == []  # a dependency's module is no local file of the same name
    assert paths.resolve("path") == ["lib/path.py"]
    assert paths.resolve("") == []


def test_tables_of_another_layout_are_made_afresh(ws: Path, tmp_path: Path) -> None:
    """A manifest whose graph tables have another layout (an older GRAPH_FORMAT) opens: the
    tables are made again, and the rows written then answer."""
    db = tmp_path / "manifest.sqlite"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE graph_files (id INTEGER PRIMARY KEY, path TEXT)")
        c.execute("CREATE TABLE graph_defs (file INTEGER, name TEXT)")
    manifest = Manifest(db)
    _put(manifest, ws, _all(ws))
    assert ("shop/cart.py", 14, "Cart.total", "call") in _refs(db, "tax_rate")
    manifest.close()
    Manifest(db).close()  # today's layout is kept as it is
    assert _rows(db, "graph_defs", "shop/pricing.py") > 0


def test_a_member_reached_from_far_away_through_an_object_is_another_types(tmp_path: Path) -> None:
    """`x.create()` in a file that neither is, imports nor sits beside `Ky.create`'s file, and
    whose object is not named `Ky`, is some other type's `create` (`Object.create`): no use of
    it. Through the type's name, from an importing file, or from a file beside it, it is."""
    db = _indexed(
        tmp_path,
        {
            "lib/ky.ts": "export class Ky {\n  static create(x: number): Ky {\n    return new Ky();\n  }\n}\n",
            "lib/retry.ts": "export function retry(k: any) {\n  return k.create(2);\n}\n",
            "app/main.ts": "import { Ky } from '../lib/ky';\n\nexport function main(k: any) {\n  Ky.create(1);\n"
            "  return k.create(3);\n}\n",
            "app/other.ts": "export function other(o: any) {\n  const a = Object.create(null);\n  return o.create(a);\n}\n",
        },
    )
    found = {(p, line) for p, line, _, _ in _refs(db, "Ky.create", "lib/ky.ts")}
    assert found == {("app/main.ts", 4), ("app/main.ts", 5), ("lib/retry.ts", 2)}, found


def test_a_name_reached_through_a_runtime_object_is_not_the_projects(tmp_path: Path) -> None:
    """`JSON.parse` beside the project's one `Storage.parse` is the runtime's; `store.parse` is
    the project's (same folder, no type to tell otherwise)."""
    db = _indexed(
        tmp_path,
        {
            "lib/storage.ts": "export class Storage {\n  parse(text: string): string {\n    return text;\n  }\n}\n",
            "lib/use.ts": "export function load(store: any, raw: string) {\n  const a = JSON.parse(raw);\n"
            "  return store.parse(a);\n}\n",
        },
    )
    assert {(p, line) for p, line, _, _ in _refs(db, "Storage.parse", "lib/storage.ts")} == {("lib/use.ts", 3)}


def test_in_cpp_a_member_counts_only_where_its_file_is_included(tmp_path: Path) -> None:
    """ninja's one flat folder: `s.size()` in a file that does not include string_piece.hpp is a
    std::string's, not `StringPiece::size`; in a file that includes it, or in the header itself,
    it is the project's. A use through a standard type (`std::vector<int>::size_type`,
    `numeric_limits<int>::max`) is never the project's, template arguments or not."""
    db = _indexed(
        tmp_path,
        {
            "src/string_piece.hpp": "struct StringPiece {\n  size_t size() const { return len_; }\n"
            "  size_t max() const;\n  size_t len_;\n  bool empty() const { return size() == 0; }\n};\n",
            "src/util.cc": '#include "string_piece.hpp"\n\nsize_t Length(const StringPiece& p) {\n  return p.size();\n}\n',
            "src/build.cc": "#include <string>\n#include <limits>\n\nsize_t Count(const std::string& s) {\n"
            "  return s.size();\n}\nsize_t Most() {\n  return std::numeric_limits<size_t>::max();\n}\n",
        },
    )
    sizes = {(p, line) for p, line, _, _ in _refs(db, "StringPiece.size", "src/string_piece.hpp")}
    assert sizes == {("src/string_piece.hpp", 5), ("src/util.cc", 4)}, sizes
    assert _refs(db, "StringPiece.max", "src/string_piece.hpp") == set()
