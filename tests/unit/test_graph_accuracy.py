"""bench/graph_accuracy.py's pure parts: sampling uniquely named and ambiguous definitions, the
name's position, the comparison and its sums, a server's locations. No language server."""

from __future__ import annotations

from pathlib import Path

from bench.graph_accuracy import (
    Def,
    Repo,
    Tally,
    compared,
    licence_of,
    name_position,
    sample,
    server_locations,
)

PY = (".py",)


def d(path: str, name: str, line: int = 1, scope: str = "") -> Def:
    return Def(path, name, "function", scope, line, line + 3)


def test_sample_keeps_names_defined_once_apart_from_ambiguous_ones() -> None:
    defs = [
        d("a.py", "alpha"),
        d("b.py", "beta"),
        d("a.py", "shared", 10),
        d("b.py", "shared", 20),
        d("tests/test_a.py", "helper_only_in_tests"),  # a test path: never sampled
        d("a.py", "__init__"),  # dunder
        d("a.py", "xy"),  # too short
        d("c.js", "gamma"),  # another language
    ]
    unique, ambiguous = sample(defs, PY, 10, 10, seed=1)
    assert [x.name for x in unique] == ["alpha", "beta"]
    assert [x.name for x in ambiguous] == ["shared"]


def test_sample_is_seeded_and_bounded() -> None:
    defs = [d(f"m{i}.py", f"name_{i}") for i in range(100)]
    first = sample(defs, PY, 5, 0, seed=7)
    assert first == sample(defs, PY, 5, 0, seed=7)
    assert len(first[0]) == 5
    assert first != sample(defs, PY, 5, 0, seed=8)


def test_names_defined_too_often_are_not_sampled_as_ambiguous() -> None:
    defs = [d(f"m{i}.py", "run") for i in range(7)]
    assert sample(defs, PY, 5, 5, seed=1) == ([], [])


def test_name_position_skips_decorators_and_counts_utf16() -> None:
    lines = ["@cache", "def load(x):", "    pass"]
    assert name_position(lines, "load", 1, 3) == (1, 4)
    assert name_position(["/* 😀 */ int go(void)"], "go", 1, 1) == (0, 13)
    assert name_position(["def loader(): pass"], "load", 1, 1) is None


def test_compared_leaves_the_definition_out_and_tally_sums() -> None:
    own = {("a.py", 3), ("a.py", 4)}
    ours, theirs = compared([("a.py", 3), ("b.py", 1), ("b.py", 2)], [("a.py", 4), ("b.py", 1), ("c.py", 9)], own)
    assert ours == {("b.py", 1), ("b.py", 2)} and theirs == {("b.py", 1), ("c.py", 9)}
    t = Tally()
    t.add(ours, theirs)
    t.add(set(), set())  # a symbol nobody uses: no effect on the ratios
    assert (t.symbols, t.with_references, t.shared, t.ragls, t.server) == (2, 1, 1, 2, 2)
    assert t.precision == 0.5 and t.recall == 0.5
    assert Tally().precision is None and Tally().recall is None
    total = Tally()
    total.merge(t)
    total.merge(t)
    assert total.report()["shared"] == 2 and total.precision == 0.5


def test_server_locations_are_relative_and_inside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    inside = (root / "pkg" / "m.py").as_uri()
    result = [
        {"uri": inside, "range": {"start": {"line": 4, "character": 2}, "end": {"line": 4, "character": 6}}},
        {"uri": (tmp_path / "stdlib.py").as_uri(), "range": {"start": {"line": 0, "character": 0}}},
        {"uri": "untitled:1", "range": {"start": {"line": 0, "character": 0}}},
    ]
    assert server_locations(result, root) == {("pkg/m.py", 5)}
    assert server_locations(None, root) == set()


def test_repo_spec_and_licence(tmp_path: Path) -> None:
    r = Repo.parse("typescript=/m/owner+name/repo:src/lib,tsconfig.json")
    assert (r.language, r.source, r.parts) == ("typescript", "/m/owner+name/repo", ["src/lib", "tsconfig.json"])
    (tmp_path / "LICENSE").write_text("MIT License\n\nPermission is hereby granted, free of charge, to any person")
    assert licence_of(tmp_path).startswith("MIT")
