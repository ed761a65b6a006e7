"""The worker thread is the only writer of the index state (index/state.py): no other module
assigns, deletes or mutates an attribute of an `IndexState`, and the `Indexer`'s public
methods, which request threads call, only post jobs. Read from the source's syntax tree, so a
new write anywhere fails here before it races a reader."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "ragls"

# The worker thread's own modules: the loop and the steps it runs (and the state's methods).
WORKER = {"index/state.py", "index/worker.py", "index/lexical_pass.py", "index/apply.py", "index/backfill.py"}

# Calls that change the object they are called on (containers, and IndexState's own writers).
MUTATORS = {
    "add",
    "append",
    "appendleft",
    "clear",
    "discard",
    "extend",
    "pop",
    "popitem",
    "popleft",
    "remove",
    "setdefault",
    "update",
    "set_status",
    "set_chunk_ids",
    "error",
    "forget_files",
    "apply_edits",
    "publish",
}


def _through_state(node: ast.expr, aliases: set[str]) -> bool:
    """Does this expression reach into an index state: `x.state.<...>` or `<alias>.<...>`,
    where an alias was bound from `<...>.state`? (`report.state = ...` sets a field called
    state; it does not reach into one.)"""
    inner = node
    while isinstance(inner, ast.Attribute | ast.Subscript):
        inner = inner.value
        if isinstance(inner, ast.Attribute) and inner.attr == "state":
            return True
    return isinstance(inner, ast.Name) and inner.id in aliases and inner is not node


def _aliases(fn: ast.AST) -> set[str]:
    """Names bound to an index state in this function: `st = self.state`, `st, h = self.state, ...`."""
    names: set[str] = set()
    for node in ast.walk(fn):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            pairs: list[tuple[ast.expr, ast.expr]] = []
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                pairs = list(zip(target.elts, node.value.elts, strict=False))
            else:
                pairs = [(target, node.value)]
            for t, v in pairs:
                if isinstance(t, ast.Name) and isinstance(v, ast.Attribute) and v.attr == "state":
                    names.add(t.id)
    return names


def state_writes(tree: ast.AST) -> list[int]:
    """The lines of `tree` that write an index state's attribute."""
    lines: list[int] = []
    scopes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)]
    for scope in [tree, *scopes]:
        aliases = _aliases(scope) if scope is not tree else set()
        for node in ast.walk(scope):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = [e for t in node.targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            elif isinstance(node, ast.Delete):
                targets = node.targets
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
                if _through_state(node.func, aliases):
                    lines.append(node.lineno)
                continue
            lines.extend(
                t.lineno for t in targets if isinstance(t, ast.Attribute | ast.Subscript) and _through_state(t, aliases)
            )
    return sorted(set(lines))


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (p.relative_to(PACKAGE).as_posix(), ast.parse(p.read_text(), str(p))) for p in sorted(PACKAGE.rglob("*.py"))
    ]


def test_only_the_worker_modules_write_the_index_state() -> None:
    found = {rel: lines for rel, tree in _modules() if rel not in WORKER and (lines := state_writes(tree))}
    assert found == {}, f"index state written outside the worker (post a job instead, index/jobs.py): {found}"


def test_the_indexers_public_methods_only_post_jobs() -> None:
    tree = ast.parse((PACKAGE / "index" / "worker.py").read_text())
    indexer = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Indexer")
    public = [f for f in indexer.body if isinstance(f, ast.FunctionDef) and not f.name.startswith("_")]
    assert {"retry_now", "set_buffer", "prioritize", "counters"} <= {f.name for f in public}
    found = {f.name: lines for f in public if (lines := state_writes(f))}
    assert found == {}, f"Indexer methods called by request threads write the state: {found}"


@pytest.mark.parametrize(
    ("source", "writes"),
    [
        ("def f(self):\n    self.indexer.state.open_docs[rel] = text\n", 1),
        ("def f(self):\n    st = self.state\n    st.phase = 'idle'\n", 1),
        ("def f(self):\n    st, h = self.state, self.handle\n    st.pending.add(p)\n", 1),
        ("def f(idx):\n    idx.state.fault.retry_at = 0.0\n", 1),
        ("def f(idx):\n    del idx.state.failed[p]\n", 1),
        ("def f(idx):\n    idx.state.error('', 'x')\n", 1),
        # reads, and a field that happens to be called state:
        ("def f(idx):\n    n = len(idx.state.pending)\n    report.state = 'failed'\n", 0),
        ("def f(idx):\n    with idx.state.lock:\n        x = idx.state.open_docs.get(rel)\n", 0),
    ],
)
def test_the_check_sees_a_write(source: str, writes: int) -> None:
    assert len(state_writes(ast.parse(source))) == writes
