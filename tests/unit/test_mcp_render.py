"""What `ragls mcp` tells a model: degraded and failed searches, and the status in words."""

from __future__ import annotations

from pathlib import Path

from ragls.config import Settings
from ragls.mcp_server import TOOLS, RaglsMcp, status_text
from ragls.protocol import ChunkOut, Position, Progress, Range, RetrieveResultOut
from ragls.shared_index import CLIENT
from ragls.status import starting_status

CHUNK = ChunkOut(
    uri="file:///w/a.py",
    path="a.py",
    range=Range(start=Position(line=0, character=0), end=Position(line=3, character=0)),
    symbol="f",
    kind="function",
    language="python",
    score=0.5,
    content="def f():\n    return 1\n",
)


def ready_status():  # type: ignore[no-untyped-def]
    st = starting_status(Path("/w"), Settings(), None)
    return st.model_copy(update={"state": "ready", "phase": "idle", "files_total": 3, "files_indexed": 3})


def test_degraded_results_are_answers_that_say_so() -> None:
    app = RaglsMcp(Path("/"))
    res = RetrieveResultOut(
        context="<rag_context>...</rag_context>",
        chunks=[CHUNK],
        took_ms=1.0,
        error="dense search unavailable (provider down); results are lexical only",
    )
    out = app._code_result("results", "f", res, ready_status())
    assert not out.is_error
    assert out.structured_content["warnings"] == [res.error]  # type: ignore[index]
    assert out.content[0].text.startswith("Warning: dense search unavailable")  # type: ignore[union-attr]


def test_a_search_that_could_not_run_is_a_tool_error() -> None:
    app = RaglsMcp(Path("/"))
    res = RetrieveResultOut(context="", chunks=[], took_ms=0.0, error="index is not available")
    out = app._code_result("results", "f", res, ready_status())
    assert out.is_error and "index is not available" in out.content[0].text  # type: ignore[union-attr]


def test_results_while_indexing_carry_a_warning() -> None:
    app = RaglsMcp(Path("/"))
    st = starting_status(Path("/w"), Settings(), None).model_copy(
        update={"phase": "dense", "files_total": 10, "lexical": Progress(done=10, total=10)}
    )
    res = RetrieveResultOut(context="", chunks=[CHUNK], took_ms=1.0)
    out = app._code_result("results", "f", res, st)
    warnings = out.structured_content["warnings"]  # type: ignore[index]
    assert len(warnings) == 1 and "still being built" in warnings[0] and "0/0 embedded" in warnings[0]
    assert "raise it" in out.content[0].text  # type: ignore[union-attr]  (no context fitted)


def test_status_in_words() -> None:
    words = status_text(ready_status(), CLIENT)
    assert "ready" in words and "3 fully indexed of 3" in words and "another ragls process" in words
    broken = starting_status(Path("/w"), Settings(), "invalid settings in .ragls.toml: x")
    assert "Problem: invalid settings" in status_text(broken, None)


def test_every_tool_declares_both_schemas() -> None:
    for tool in TOOLS:
        assert tool.input_schema["type"] == "object" and tool.input_schema.get("additionalProperties") is False
        assert tool.output_schema and "$defs" not in str(tool.output_schema)
