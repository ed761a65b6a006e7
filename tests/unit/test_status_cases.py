"""The shared status case table (tests/fixtures/status-cases.json, run by every client's unit
tests) speaks the real protocol: each case is a valid IndexStatus as the server sends it."""

from __future__ import annotations

import json
from pathlib import Path

from ragls.protocol import IndexStatus

TABLE = Path(__file__).resolve().parents[1] / "fixtures" / "status-cases.json"


def test_every_case_is_a_valid_index_status() -> None:
    table = json.loads(TABLE.read_text())
    names = [c["name"] for c in table["cases"]]
    assert len(names) == len(set(names))
    assert set(table["base"]) == set(IndexStatus.model_fields[f].alias for f in IndexStatus.model_fields)
    for case in table["cases"]:
        IndexStatus.model_validate({**table["base"], **case["status"]})  # unknown keys are rejected
        assert case["icon"] in {"indexing", "ready", "warning", "error"}, case["name"]
        assert case["text"] and case["tooltip"][0].startswith("State: "), case["name"]
    covered = {(c["status"].get("state", "ready"), c["status"].get("phase", "idle")) for c in table["cases"]}
    for key in [
        ("ready", "idle"),
        ("indexing", "dense"),
        ("error", "paused"),
        ("error", "waiting"),
        ("error", "error"),
    ]:
        assert key in covered, key
