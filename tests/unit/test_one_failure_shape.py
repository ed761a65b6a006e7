"""One error mapping (issue 54): an answer that could not be given is built in one place,
`protocol.unanswered`; the layers below raise or answer, and the folder's `ask` and the index's
`call` turn what stops an answer into it. A module that builds an empty answer with an `error`
of its own would be a second mapping, and this test names it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ragls.protocol import ReferencesResult, RelatedResult, RepoMapResult, RetrieveResultOut, unanswered

SERVER = Path(__file__).resolve().parents[2] / "server" / "ragls"
ANSWERS = {"RetrieveResultOut", "ReferencesResult", "RelatedResult", "RepoMapResult"}


def _a_reason(value: ast.expr) -> bool:
    """A reason written here (text, an f-string, a `why`), not one passed on from an answer."""
    return isinstance(value, ast.Constant | ast.JoinedStr | ast.BinOp) or (
        isinstance(value, ast.Name) and value.id in {"why", "reason", "message"}
    )


def builds_a_failure(tree: ast.AST) -> list[int]:
    """Lines that construct one of the answer models with an `error=` reason of their own, or
    write a reason into an empty answer's `.error`. Merging several folders' answers passes
    their errors on (graph/merge.py): that is not a new failure."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name in ANSWERS and any(k.arg == "error" and _a_reason(k.value) for k in node.keywords):
                out.append(node.lineno)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Attribute) and t.attr == "error" and isinstance(t.value, ast.Name):
                    if t.value.id == "empty" and _a_reason(node.value):
                        out.append(node.lineno)
    return sorted(out)


def test_only_the_protocol_builds_an_unanswered_answer() -> None:
    found = {}
    for path in sorted(SERVER.rglob("*.py")):
        if path.name == "protocol.py" and path.parent == SERVER:
            continue
        if lines := builds_a_failure(ast.parse(path.read_text(), str(path))):
            found[str(path.relative_to(SERVER))] = lines
    assert found == {}, f"build failures with protocol.unanswered instead: {found}"


def test_the_checker_sees_both_shapes() -> None:
    code = "x = RetrieveResultOut(context='', chunks=[], took_ms=0.0, error='no')\nempty.error = 'why'\n"
    assert builds_a_failure(ast.parse(code)) == [1, 2]


@pytest.mark.parametrize("kind", [RetrieveResultOut, ReferencesResult, RelatedResult, RepoMapResult])
def test_every_question_has_its_unanswered_shape(kind: type) -> None:
    failed = unanswered(kind, "the index is not open")
    assert failed.error == "the index is not open" and failed.warnings == []
    notice = unanswered(kind, "nothing yet", notice=True)
    assert notice.error is None and notice.warnings == ["nothing yet"]
    # Empty: every list of results is empty, the context and map text blank.
    dumped = failed.model_dump()
    assert all(v in ([], "", 0, 0.0, None) for k, v in dumped.items() if k not in ("error", "warnings"))
