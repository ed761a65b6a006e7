"""Layers: no import cycles among the server's modules (issue 39), none among its packages, and
each package imports only the layers below it (issue 54; docs/development.md draws them).

A cycle means neither module can be read, tested or replaced without the other: `status.py`
and the indexer once imported each other. Every import counts, wherever it is written: at the
top of a module, inside a function (often written to dodge a cycle at import time), and under
`if TYPE_CHECKING:` (a cycle of types is a cycle of ideas too)."""

from __future__ import annotations

import ast
from pathlib import Path

SERVER = Path(__file__).resolve().parents[2] / "server"
PACKAGE = "ragls"
# Cycles known and not yet untangled, each with its way out. A new cycle fails the test; so does
# an entry here that no longer exists (take it out, so it cannot come back unnoticed).
KNOWN: list[list[str]] = []  # none left: workspace_id lives in ragls/system/identity.py, outside store/

# The layers, bottom first: a top-level package or module imports only from layers below its own.
# Data flows one way: discover and chunk (ingest, chunking, graph rows), embed, store, index,
# retrieve (query), serve one folder (sharing), the workspace, the front ends.
LAYERS: list[set[str]] = [
    {"ragls", "system", "text", "status_display"},  # helpers with no pipeline in them
    {"config", "protocol", "git"},
    {"chunking", "private"},
    {"graph"},
    {"ingest", "store"},
    {"embedding"},
    {"status", "feedback"},
    {"index"},
    {"query"},
    {"sharing", "evaluation"},
    {"workspace"},
    {"frontends"},
    {"__main__"},
]
MAX_TOP_LEVEL_MODULES = 15


def module_names(server: Path = SERVER) -> dict[str, Path]:
    """Every module of the package: dotted name -> file (a package is its __init__.py)."""
    out: dict[str, Path] = {}
    for path in sorted((server / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(server).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imported(node: ast.Import | ast.ImportFrom, name: str, is_package: bool) -> list[str]:
    """The dotted names an import statement in module `name` refers to."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:  # relative: from the module's package, one level up per dot beyond the first
        base = name.split(".") if is_package else name.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        stem = ".".join([*base, node.module] if node.module else base)
    else:
        stem = node.module or ""
    # `from pkg import mod` imports the module pkg.mod; `from mod import name` the module mod.
    return [f"{stem}.{alias.name}" for alias in node.names] + [stem]


def import_graph(server: Path = SERVER) -> dict[str, set[str]]:
    """module -> the package's modules it imports (anywhere in its file)."""
    modules = module_names(server)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            named = _imported(node, name, is_package)
            if isinstance(node, ast.ImportFrom):
                # `from pkg import mod` names a module; `from mod import func` only `mod`.
                found = [n for n in named[:-1] if n in modules] or [named[-1]]
            else:
                found = named
            edges.update(n for n in found if n in modules and n != name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_no_import_cycles_among_server_modules() -> None:
    found = cycles(import_graph())
    assert [c for c in found if c not in KNOWN] == [], "modules that import each other"
    assert [c for c in KNOWN if c not in found] == [], "untangled: remove it from KNOWN"


def top_level(module: str) -> str:
    """`ragls.index.worker` -> `index`; `ragls.config` -> `config`; the package itself -> `ragls`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph with every module folded into its top-level package (or module)."""
    out: dict[str, set[str]] = {}
    for name, edges in graph.items():
        out.setdefault(top_level(name), set()).update(top_level(e) for e in edges)
    return {name: edges - {name} for name, edges in out.items()}


def test_no_import_cycles_among_packages() -> None:
    assert cycles(package_graph(import_graph())) == [], "packages that import each other"


def test_each_package_imports_only_the_layers_below() -> None:
    layer = {name: i for i, names in enumerate(LAYERS) for name in names}
    graph = package_graph(import_graph())
    assert sorted(set(graph) - set(layer)) == [], "a new top-level package or module: give it a layer"
    upward = sorted(f"{a} -> {b}" for a, edges in graph.items() for b in edges if layer[b] >= layer[a])
    assert upward == [], "imports that go up or sideways"


def test_the_top_level_stays_small() -> None:
    modules = [p for p in (SERVER / PACKAGE).glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(modules) <= MAX_TOP_LEVEL_MODULES, sorted(p.name for p in modules)


def test_the_checker_sees_cycles_through_function_and_type_checking_imports(tmp_path: Path) -> None:
    """The shape of the old status.py <-> indexer.py cycle: one side imports the other only for
    type hints, the other only inside a function; a package and its submodule as well."""
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "status.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ragls.indexer import Indexer\n"
    )
    (pkg / "indexer.py").write_text("def snapshot():\n    from ragls.status import build_status\n")
    (pkg / "alone.py").write_text("import ragls.status\nfrom ragls import sub\n")
    (pkg / "sub" / "__init__.py").write_text("def f():\n    from .leaf import g\n")
    (pkg / "sub" / "leaf.py").write_text("from ragls.sub import f\nfrom .. import alone\n")
    graph = import_graph(tmp_path)
    assert graph["ragls.alone"] == {"ragls.status", "ragls.sub"}
    assert graph["ragls.sub"] == {"ragls.sub.leaf"}
    assert graph["ragls.sub.leaf"] == {"ragls.sub", "ragls.alone"}
    assert cycles(graph) == [["ragls.alone", "ragls.sub", "ragls.sub.leaf"], ["ragls.indexer", "ragls.status"]]
