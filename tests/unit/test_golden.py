"""Golden set files: JSON and TOML loading, validation messages, round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragls.evaluation.golden import GoldenQuery, GoldenSet, GoldenSetError, dump_golden, load_golden

VALID = {
    "name": "attrs-23.2.0",
    "language": "python",
    "root": "src",
    "queries": [
        {
            "id": "attrs-0001",
            "query": "Return a tuple of attribute names",
            "files": ["attr/_make.py"],
            "symbols": ["fields_dict"],
            "lines": [[120, 141]],
        },
        {"id": "attrs-0002", "query": "Anything in the README", "files": ["README.md"]},
    ],
}

VALID_TOML = """
name = "demo"
language = "go"
root = "../code"

[[queries]]
id = "demo-1"
query = "Returns the route's name"
files = ["route.go", "mux.go"]
symbols = ["Route.GetName", "Router.Name"]
lines = [[10, 12], [40, 52]]
"""


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_load_json(tmp_path: Path) -> None:
    golden = load_golden(write(tmp_path / "golden.json", VALID))
    assert golden.name == "attrs-23.2.0"
    first, second = golden.queries
    assert first.lines == [(120, 141)]
    assert first.answers() == [("attr/_make.py", (120, 141))]
    assert second.lines is None and second.answers() == [("README.md", None)]
    assert golden.root_dir() == (tmp_path / "src").resolve()
    assert golden.source == (tmp_path / "golden.json").resolve()


def test_load_toml_with_several_answers(tmp_path: Path) -> None:
    path = tmp_path / "sets" / "demo.toml"
    path.parent.mkdir()
    path.write_text(VALID_TOML, encoding="utf-8")
    golden = load_golden(path)
    (query,) = golden.queries
    assert query.answers() == [("route.go", (10, 12)), ("mux.go", (40, 52))]
    assert golden.root_dir() == (tmp_path / "code").resolve()


def test_round_trip_through_dump(tmp_path: Path) -> None:
    golden = GoldenSet.model_validate(VALID)
    dump_golden(golden, tmp_path / "out.json")
    again = load_golden(tmp_path / "out.json")
    assert again.model_dump() == golden.model_dump()


def bad(tmp_path: Path, mutate: dict[str, object], index: int = 0) -> str:
    data = json.loads(json.dumps(VALID))
    data["queries"][index].update(mutate)
    with pytest.raises(GoldenSetError) as info:
        load_golden(write(tmp_path / "bad.json", data))
    return str(info.value)


def test_error_names_file_and_field(tmp_path: Path) -> None:
    message = bad(tmp_path, {"lines": [[20, 10]]})
    assert str(tmp_path / "bad.json") in message
    assert "queries[0].lines" in message
    assert "1 <= start <= end" in message


def test_error_for_missing_and_unknown_fields(tmp_path: Path) -> None:
    data = json.loads(json.dumps(VALID))
    del data["queries"][1]["query"]
    data["queries"][0]["extra"] = 1
    with pytest.raises(GoldenSetError) as info:
        load_golden(write(tmp_path / "g.json", data))
    message = str(info.value)
    assert "queries[1].query: Field required" in message
    assert "queries[0].extra" in message
    assert "2 error(s)" in message


def test_parallel_lists_must_match(tmp_path: Path) -> None:
    message = bad(tmp_path, {"lines": [[1, 2], [3, 4]]})
    assert "lines has 2 entries but files has 1" in message


@pytest.mark.parametrize("path", ["/abs/x.py", "../up.py", "a\\b.py", "./a.py", ""])
def test_files_must_be_relative_posix(tmp_path: Path, path: str) -> None:
    assert "queries[0].files" in bad(tmp_path, {"files": [path], "symbols": None, "lines": None})


def test_duplicate_ids_rejected(tmp_path: Path) -> None:
    assert "duplicate query id 'attrs-0001'" in bad(tmp_path, {"id": "attrs-0001"}, index=1)


def test_syntax_errors_and_unknown_formats(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(GoldenSetError, match=r"broken\.json: not valid JSON"):
        load_golden(broken)
    broken_toml = tmp_path / "broken.toml"
    broken_toml.write_text("name = ", encoding="utf-8")
    with pytest.raises(GoldenSetError, match=r"broken\.toml: not valid TOML"):
        load_golden(broken_toml)
    yaml = tmp_path / "g.yaml"
    yaml.write_text("name: x", encoding="utf-8")
    with pytest.raises(GoldenSetError, match=r"use \.json or \.toml"):
        load_golden(yaml)
    with pytest.raises(GoldenSetError, match="cannot read"):
        load_golden(tmp_path / "missing.json")
    with pytest.raises(GoldenSetError, match="top level must be an object"):
        load_golden(write(tmp_path / "list.json", [1, 2]))


def test_query_model_is_frozen() -> None:
    query = GoldenQuery(id="x", query="find it", files=["a.py"])
    with pytest.raises(ValueError):
        query.id = "y"  # type: ignore[misc]
