"""The multi-root status case table (tests/fixtures/status-folder-cases.json; docs/clients/status.md,
tooltip line 5) speaks the real protocol: each case is a valid IndexStatus of protocol 3 whose
top-level counters are the totals of its folders, and its `display` is exactly what the server
sends for it. Every client's unit tests render the same `display`s."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragls.protocol import PROTOCOL_VERSION, FolderStatus, IndexStatus
from ragls.status import workspace_status

TABLE = Path(__file__).resolve().parents[1] / "fixtures" / "status-folder-cases.json"
CASES = json.loads(TABLE.read_text())


def test_the_table_is_protocol_3() -> None:
    assert CASES["base"]["protocolVersion"] == PROTOCOL_VERSION
    names = [c["name"] for c in CASES["cases"]]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda c: c["name"])
def test_the_server_sends_the_cases_display(case: dict) -> None:
    status = IndexStatus.model_validate({**CASES["base"], **case["status"]})  # unknown keys are rejected
    folders = [f for f in status.folders if f.nested_in is None]
    assert status.chunks == sum(f.chunks for f in folders), case["name"]
    assert status.files_indexed == sum(f.files_indexed for f in folders), case["name"]
    assert status.files_failed == sum(f.files_failed for f in folders), case["name"]
    display = status.model_dump(by_alias=True, mode="json")["display"]
    assert display == case["display"]
    lines = [t for t in display["tooltip"] if t.startswith("Folder ")]
    assert len(lines) == (len(status.folders) if len(status.folders) >= 2 else 0)


def test_the_workspace_totals_carry_the_display_of_the_totals() -> None:
    """workspace_status (the LSP server's multi-root aggregation) sends the display of its totals."""
    case = next(c for c in CASES["cases"] if c["name"] == "a folder in error next to a ready one")
    whole = IndexStatus.model_validate({**CASES["base"], **case["status"]})
    parts: list[tuple[FolderStatus, IndexStatus | None]] = []
    for i, f in enumerate(whole.folders):
        own = whole.model_copy(
            update={
                "state": f.state,
                "phase": f.phase,
                "files_total": f.files_total,
                "files_indexed": f.files_indexed,
                "files_failed": f.files_failed,
                "files_skipped": whole.files_skipped if i == 0 else 0,
                "chunks": f.chunks,
                "errors": f.errors,
                "message": f.message,
                "folders": [f],
            }
        )
        parts.append((f, own))
    assert workspace_status(parts).model_dump(by_alias=True)["display"] == case["display"]
