"""Workspace folders (workspace/folders.py): names, nesting, `folders` selection and folder-prefixed globs;
the fusion of several folders' answers (answer.fuse) and the workspace status totals."""

from __future__ import annotations

from pathlib import Path

import pathspec
import pytest

from ragls.config import Settings
from ragls.protocol import ChunkOut, ErrorOut, IndexStatus, Position, Progress, Range, RetrieveResultOut
from ragls.query.answer import fuse
from ragls.status import build_status, folder_entry, workspace_status
from ragls.workspace.folders import Folders, UnknownFolder, split_globs, under


def workspace(tmp_path: Path, *specs: tuple[str, str | None]) -> Folders:
    fs = Folders()
    for rel, name in specs:
        (tmp_path / rel).mkdir(parents=True, exist_ok=True)
        fs.add((tmp_path / rel).as_uri(), name)
    fs.renest()
    return fs


def test_names_come_from_the_client_else_the_directory_and_are_unique(tmp_path: Path) -> None:
    fs = workspace(tmp_path, ("a/lib", None), ("b/lib", None), ("c/lib", "lib"), ("d", "Docs"), ("e", " "))
    assert [f.name for f in fs.items] == ["lib", "lib (2)", "lib (3)", "Docs", "e"]
    assert fs.add((tmp_path / "a/lib").as_uri(), "again") is None  # already open
    assert fs.add("untitled:Untitled-1", "x") is None
    gone = fs.remove((tmp_path / "b/lib").as_uri())
    assert gone is not None and gone.removed and [f.name for f in fs.items] == ["lib", "lib (3)", "Docs", "e"]
    assert fs.add((tmp_path / "f/lib").as_uri(), None).name == "lib (2)"  # type: ignore[union-attr]


def test_nested_folders_are_covered_by_the_outermost(tmp_path: Path) -> None:
    fs = workspace(tmp_path, ("mono/pkg/sub", None), ("mono/pkg", None), ("mono", None), ("other", None))
    assert [(f.name, f.nested_in) for f in fs.items] == [
        ("sub", "mono"),
        ("pkg", "mono"),
        ("mono", None),
        ("other", None),
    ]
    assert [f.name for f in fs.indexed] == ["mono", "other"]
    assert fs.index_of(fs.items[0]) == (fs.get("mono"), "pkg/sub")
    assert fs.owner_of(tmp_path / "mono/pkg/sub/x.py") == (fs.get("mono"), "pkg/sub/x.py")
    assert fs.owner_of(tmp_path / "elsewhere.py") is None
    fs.remove((tmp_path / "mono").as_uri())
    fs.renest()
    assert [(f.name, f.nested_in) for f in fs.items] == [("sub", "pkg"), ("pkg", None), ("other", None)]


def test_select_by_name_or_uri_and_unknown_names_the_folders(tmp_path: Path) -> None:
    fs = workspace(tmp_path, ("api", None), ("web", None))
    assert [f.name for f in fs.select(["web", (tmp_path / "api").as_uri(), "web"])] == ["web", "api"]
    with pytest.raises(UnknownFolder, match=r"'nope'.*'api', 'web'"):
        fs.select(["nope"])


def test_globs_prefixed_with_a_folder_apply_to_it_only(tmp_path: Path) -> None:
    fs = workspace(tmp_path, ("api", None), ("web", None), ("api2", "api (2)"))
    names = [f.name for f in fs.items]
    assert split_globs(["api/src/**", "*.md", "!web/x.ts", "api (2)/a", "web", "apis/*"], names) == (
        ["*.md", "apis/*"],
        {"api": ["src/**"], "web": ["!x.ts", "**"], "api (2)": ["a"]},
    )
    plan = {f.name: g for f, g in fs.plan(None, ["api/src/**", "*.md"])}
    assert plan == {"api": ["*.md", "src/**"], "web": ["*.md"], "api (2)": ["*.md"]}
    plan = {f.name: g for f, g in fs.plan(None, ["web/**"])}
    assert plan == {"web": ["**"]}  # the others have no glob left: not searched
    assert {f.name: g for f, g in fs.plan(["api"], None)} == {"api": None}
    # One folder: no prefixes (`api/**` is a directory of the folder).
    one = workspace(tmp_path / "one", ("api", None))
    assert [(f.name, g) for f, g in one.plan(None, ["api/**"])] == [("api", ["api/**"])]


def test_a_nested_folder_is_searched_as_its_part_of_the_outer_index(tmp_path: Path) -> None:
    fs = workspace(tmp_path, ("mono", None), ("mono/pkg", None))
    assert [(f.name, g) for f, g in fs.plan(["pkg"], None)] == [("mono", ["pkg/**"])]
    assert [(f.name, g) for f, g in fs.plan(["pkg"], ["*.py", "src/a.py"])] == [
        ("mono", ["pkg/**/*.py", "pkg/src/a.py"])
    ]
    assert [(f.name, g) for f, g in fs.plan(None, None)] == [("mono", None)]
    assert [(f.name, g) for f, g in fs.plan(["pkg", "mono"], None)] == [("mono", None)]
    spec = pathspec.PathSpec.from_lines("gitignore", [under("pkg", "*.py"), under("pkg", "!x/*.py")])
    assert spec.match_file("pkg/a/b.py") and not spec.match_file("top.py")


def chunk(path: str, score: float, symbol: str | None = None, line: int = 0) -> ChunkOut:
    return ChunkOut(
        uri=f"file:///x/{path}",
        path=path,
        range=Range(start=Position(line=line, character=0), end=Position(line=line + 2, character=0)),
        symbol=symbol,
        kind="function",
        language="python",
        score=score,
        content=f"code of {path}\n",
    )


def answer(*chunks: ChunkOut, warnings: list[str] | None = None) -> RetrieveResultOut:
    return RetrieveResultOut(context="", chunks=list(chunks), took_ms=1.0, warnings=warnings or [])


def test_fusion_merges_by_rank_scores_keeping_each_folders_order() -> None:
    a = answer(chunk("named.py", 0.05, "compute_total"), chunk("a1.py", 0.12), chunk("a2.py", 0.04))
    b = answer(chunk("b1.py", 0.10), chunk("b2.py", 0.09), warnings=["dense search unavailable"])
    out = fuse([("A", "file:///a", a), ("B", "file:///b", b)], "how are invoices summed", 4, 100_000)
    assert [(c.folder, c.path) for c in out.chunks] == [
        ("A", "named.py"),
        ("A", "a1.py"),
        ("B", "b1.py"),
        ("B", "b2.py"),
    ]
    assert [c.score for c in out.chunks] == [0.12, 0.12, 0.10, 0.09]
    assert out.chunks[2].folder_uri == "file:///b"
    assert out.warnings == ["B: dense search unavailable"] and out.error is None
    assert 'file="A/named.py" lines="1-2" symbol="compute_total"' in out.context
    assert out.context.index("A/a1.py") < out.context.index("B/b1.py")
    # Ties go to the better rank in a folder, then to workspace order; named definitions lead.
    c = answer(chunk("c1.py", 0.10), chunk("c2.py", 0.10))
    d = answer(chunk("d1.py", 0.10), chunk("d2.py", 0.02, "Invoice.compute_total"))
    out = fuse([("C", "u", c), ("D", "v", d)], "where is compute_total defined", 10, 0)
    assert [c.path for c in out.chunks] == ["d2.py", "c1.py", "d1.py", "c2.py"] and out.context == ""


def test_fusion_ties_go_to_the_chunk_with_more_query_terms() -> None:
    e = answer(chunk("e1.py", 0.10), chunk("e2.py", 0.08))
    f = answer(chunk("invoice_tax.py", 0.10), chunk("f2.py", 0.09))
    out = fuse([("E", "u", e), ("F", "v", f)], "invoice tax rounding", 4, 0)
    assert [c.path for c in out.chunks] == ["invoice_tax.py", "e1.py", "f2.py", "e2.py"]


def test_fusion_errors_only_when_no_folder_answers() -> None:
    bad = RetrieveResultOut(context="", chunks=[], took_ms=0.0, error="index is not available")
    out = fuse([("A", "u", answer(chunk("a.py", 0.1))), ("B", "v", bad)], "q", 5, 1000)
    assert out.error is None and [c.path for c in out.chunks] == ["a.py"]
    assert out.warnings == ["B: not searched (index is not available)"]
    out = fuse([("A", "u", bad), ("B", "v", bad)], "q", 5, 1000)
    assert out.error == "A: index is not available; B: index is not available" and out.chunks == []


def status(root: Path, state: str, phase: str, files: int, chunks: int, **kw: object) -> IndexStatus:
    st = build_status(root, Settings())
    return st.model_copy(
        update={
            "state": state,
            "phase": phase,
            "files_total": files,
            "files_indexed": files,
            "chunks": chunks,
            "lexical": Progress(done=files, total=files),
            "dense": Progress(done=files, total=files),
            **kw,
        }
    )


def test_workspace_status_totals_and_entries(tmp_path: Path) -> None:
    a, b, n = tmp_path / "a", tmp_path / "b", tmp_path / "a" / "n"
    err = ErrorOut(path="x.py", message="boom", time="t")
    sa = status(a, "ready", "idle", 3, 10, errors=[err], skipped_by_reason={"ignored": 2})
    sb = status(b, "indexing", "dense", 2, 5, skipped_by_reason={"ignored": 1, "secret": 1}, message="slow")
    one = workspace_status([(folder_entry("a", a.as_uri(), a, sa), sa)])
    assert one.model_dump(exclude={"folders"}) == sa.model_dump(exclude={"folders"})
    assert [f.name for f in one.folders] == ["a"]
    st = workspace_status(
        [
            (folder_entry("n", n.as_uri(), n, sa, nested_in="a"), None),
            (folder_entry("a", a.as_uri(), a, sa), sa),
            (folder_entry("b", b.as_uri(), b, sb), sb),
        ]
    )
    assert (st.state, st.phase) == ("indexing", "dense")
    assert (st.files_total, st.chunks, st.lexical.done, st.dense.total) == (5, 15, 5, 5)
    assert st.skipped_by_reason == {"ignored": 3, "secret": 1}
    assert [e.path for e in st.errors] == ["a/x.py"] and st.message == "b: slow"
    assert st.workspace == str(n) and [f.name for f in st.folders] == ["n", "a", "b"]
    assert st.folders[0].nested_in == "a" and st.folders[0].chunks == 0 and st.folders[0].state == "ready"
    sb2 = sb.model_copy(update={"state": "error", "phase": "waiting"})
    st = workspace_status([(folder_entry("a", "u", a, sa), sa), (folder_entry("b", "v", b, sb2), sb2)])
    assert (st.state, st.phase) == ("error", "waiting")


async def test_a_status_asked_during_a_folder_change_describes_one_set_of_folders(tmp_path: Path) -> None:
    """MCP roots and the LSP's workspace folders may change while a status is gathered: the
    status describes the folders as they were when it was asked (no KeyError on a folder that
    arrived meanwhile)."""
    import asyncio

    from ragls.protocol import StatusEnvelope
    from ragls.workspace.index import WorkspaceIndex

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    ws = WorkspaceIndex()
    ws.add_path(a)
    ws.folders.renest()
    gate = asyncio.Event()
    first = ws.folders.items[0]
    own = first.status

    async def slow(at_rest: bool = False) -> StatusEnvelope:
        await gate.wait()
        return await own(at_rest)

    first.status = slow  # type: ignore[method-assign]
    asked = asyncio.create_task(ws.status())
    await asyncio.sleep(0)
    await ws.change_folders([(b.as_uri(), None)], [a.as_uri()])
    gate.set()
    assert [f.name for f in (await asked).status.folders] == ["a"]
    assert [f.name for f in (await ws.status()).status.folders] == ["b"]
