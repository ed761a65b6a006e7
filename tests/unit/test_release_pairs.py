"""The release miner of the embedder's change-description pairs (scripts/embedder/release_pairs.py):
the query is the changelog entry a release added, the code is what it changed, in the earlier
release, and releases that are not one described change give nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "embedder"))

from release_pairs import changed_rows, clean_entry, main, release_pairs  # noqa: E402

OLD_CODE = (
    "def parse_host(value):\n"
    "    host = value.strip()\n"
    "    return host\n"
    "\n"
    "\n"
    "def quote_path(path):\n"
    "    return path.replace(' ', '%20')\n"
)
NEW_CODE = OLD_CODE.replace(
    "    host = value.strip()\n", "    host = value.strip().lower()\n    if not host:\n        return ''\n"
)
OLD_LOG = "# Changes\n\n## 1.0.0\n\n- First release.\n"
NEW_LOG = (
    "# Changes\n\n## 1.0.1\n\n### Bug fixes\n\n"
    "- `parse_host` returns the empty string for a missing header ([#42](https://x.test/pull/42)), thanks @someone!\n"
    "\n## 1.0.0\n\n- First release.\n"
)


def test_entry_is_cleaned_of_structure_references_and_credits() -> None:
    assert (
        clean_entry(
            "## 1.0.1\n### Bug fixes\n- `parse_host` returns the empty string (#42) [abc1234def](https://x.test/c)\n"
            "- Read the token from the environment (<https://x.test/pull/7>`_), by @someone\n"
        )
        == "parse_host returns the empty string. Read the token from the environment"
    )


def test_long_release_notes_and_dependency_bumps_are_no_query() -> None:
    assert clean_entry("\n".join(f"- change number {i} of the release" for i in range(6))) is None
    assert clean_entry("- Bump dependencies to the latest versions") is None
    assert clean_entry("## 2.0.0\n") is None


def test_changed_rows_are_lines_of_the_older_file() -> None:
    assert changed_rows("a\nb\nc\n", "a\nB\nc\n") == {2}
    assert changed_rows("a\nb\n", "a\nx\nb\n") == {1, 2}  # an insertion marks both neighbours


def test_pair_is_the_changed_chunk_of_the_earlier_release_with_the_entry() -> None:
    prev = {"CHANGES.md": OLD_LOG, "pkg/http.py": OLD_CODE, "tests/test_http.py": "def test_x():\n    pass\n"}
    cur = {"CHANGES.md": NEW_LOG, "pkg/http.py": NEW_CODE, "tests/test_http.py": "def test_x():\n    assert 1\n"}
    pairs = release_pairs(prev, cur)
    assert [p["symbol"] for p in pairs] == ["parse_host"]
    assert pairs[0]["query"] == "parse_host returns the empty string for a missing header"
    assert "value.strip()\n" in pairs[0]["code"] and ".lower()" not in pairs[0]["code"]  # the parent's code


def test_a_release_without_a_changelog_entry_or_with_many_files_gives_nothing() -> None:
    prev = {"CHANGES.md": OLD_LOG, "pkg/http.py": OLD_CODE}
    assert release_pairs(prev, {"CHANGES.md": OLD_LOG, "pkg/http.py": NEW_CODE}) == []
    many_old = {"CHANGES.md": OLD_LOG, **{f"pkg/m{i}.py": OLD_CODE for i in range(4)}}
    many_new = {"CHANGES.md": NEW_LOG, **{f"pkg/m{i}.py": NEW_CODE for i in range(4)}}
    assert release_pairs(many_old, many_new) == []
    built = {"CHANGES.md": NEW_LOG, "dist/http.py": NEW_CODE, "pkg/http.py": OLD_CODE}
    assert release_pairs({**prev, "dist/http.py": OLD_CODE}, built) == []  # built bundles do not count


def test_mix_recleans_deduplicates_and_replays_as_many_doc_pairs(tmp_path: Path) -> None:
    release = tmp_path / "pairs.jsonl"
    row = {"registry": "pypi", "package": "p", "releases": "1.0.0..1.0.1", "path": "p.py", "code": "def f(): ..."}
    lines = [
        {**row, "query": "Fix the header parser (#12)", "language": "python"},
        {**row, "query": "Fix the header parser (#12)", "language": "python"},  # the same pair mined twice
        {**row, "code": "def g(): ...", "query": "- Bump deps to the latest versions", "language": "python"},
    ]
    release.write_text("".join(json.dumps(x) + "\n" for x in lines))
    versions = [{"version": v, "sha256": v * 8} for v in ("1.0.0", "1.0.1")]
    (tmp_path / "manifest.jsonl").write_text(
        json.dumps({"spec": "pypi:p", "licence": "MIT", "releases": versions}) + "\n"
    )
    replay = tmp_path / "docs.jsonl"
    replay.write_text("".join(json.dumps({"query": f"doc {i}", "language": "go"}) + "\n" for i in range(5)))
    out = tmp_path / "stage.jsonl"
    assert main(["--mix", str(release), "--replay", str(replay), "--out", str(out)]) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert sorted(r["query"] for r in rows if r["language"] == "python") == ["Fix the header parser"]
    assert len(rows) == 2
    manifest = json.loads((tmp_path / "stage.manifest.json").read_text())
    assert manifest == [
        {"spec": "pypi:p", "licence": "MIT", "pairs": 1, "releases": {"1.0.0": "1.0.0" * 8, "1.0.1": "1.0.1" * 8}}
    ]
