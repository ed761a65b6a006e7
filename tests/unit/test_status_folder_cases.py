"""The multi-root status case table (tests/fixtures/status-folder-cases.json, run by every
client's unit tests; docs/clients/status.md, tooltip line 5) speaks the real protocol: each case
is a valid IndexStatus of protocol 3 whose top-level counters are the totals of its folders."""

from __future__ import annotations

import json
from pathlib import Path

from ragls.protocol import PROTOCOL_VERSION, IndexStatus

TABLE = Path(__file__).resolve().parents[1] / "fixtures" / "status-folder-cases.json"


def test_every_case_is_a_valid_multi_root_status() -> None:
    table = json.loads(TABLE.read_text())
    assert table["base"]["protocolVersion"] == PROTOCOL_VERSION
    names = [c["name"] for c in table["cases"]]
    assert len(names) == len(set(names))
    for case in table["cases"]:
        status = IndexStatus.model_validate({**table["base"], **case["status"]})  # unknown keys are rejected
        folders = [f for f in status.folders if f.nested_in is None]
        assert status.chunks == sum(f.chunks for f in folders), case["name"]
        assert status.files_indexed == sum(f.files_indexed for f in folders), case["name"]
        assert status.files_failed == sum(f.files_failed for f in folders), case["name"]
        lines = [t for t in case["tooltip"] if t.startswith("Folder ")]
        assert len(lines) == (len(status.folders) if len(status.folders) >= 2 else 0), case["name"]
