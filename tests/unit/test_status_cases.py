"""The status case table (tests/fixtures/status-cases.json) is what the server shows: each case
is a valid IndexStatus as the server sends it, and its `display` is exactly the
`IndexStatus.display` the server serialises for it (status_display.py). Every client's unit tests
render the same `display`s (docs/clients/status.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragls.protocol import IndexStatus
from ragls.status_display import display

TABLE = Path(__file__).resolve().parents[1] / "fixtures" / "status-cases.json"
CASES = json.loads(TABLE.read_text())


def test_the_table_covers_every_state_and_soft_error() -> None:
    names = [c["name"] for c in CASES["cases"]]
    assert len(names) == len(set(names))
    # the base is a whole status: every field but the derived `display`
    assert set(CASES["base"]) == {f.alias for n, f in IndexStatus.model_fields.items() if n != "display"}
    covered = {(c["status"].get("state", "ready"), c["status"].get("phase", "idle")) for c in CASES["cases"]}
    for key in [
        ("ready", "idle"),
        ("indexing", "dense"),
        ("error", "paused"),
        ("error", "waiting"),
        ("error", "error"),
    ]:
        assert key in covered, key
    assert {c["display"]["health"] for c in CASES["cases"]} == {"ok", "indexing", "warning", "error"}


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda c: c["name"])
def test_the_server_sends_the_cases_display(case: dict) -> None:
    status = IndexStatus.model_validate({**CASES["base"], **case["status"]})  # unknown keys are rejected
    wire = status.model_dump(by_alias=True, mode="json")
    assert wire["display"] == case["display"]
    assert json.loads(status.model_dump_json(by_alias=True))["display"] == case["display"]
    # the same function on the plain wire form (frontends/lsp/early_status.py's path)
    assert display({**CASES["base"], **case["status"]}) == case["display"]


def test_display_follows_changes_made_after_the_status_was_built() -> None:
    """frontends/lsp/server.py and `ragls status` set fields on a built status: the display sent matches them."""
    status = IndexStatus.model_validate(CASES["base"])
    assert status.model_dump(by_alias=True)["display"]["health"] == "ok"
    status.message = "bad settings"
    status.state = "error"
    status.phase = "error"
    sent = status.model_dump(by_alias=True)["display"]
    assert (sent["health"], sent["text"]) == ("error", "error")
    assert sent["tooltip"][:2] == ["State: error (error)", "bad settings"]
    # a status read back (owner socket) with a stale display is shown as it is now
    stale = {**CASES["base"], "display": {"health": "error", "text": "stale", "tooltip": []}}
    assert IndexStatus.model_validate(stale).model_dump(by_alias=True)["display"]["text"] == "1,234 chunks"


def test_the_protocol_schema_describes_what_the_server_sends() -> None:
    """`ragls schema --protocol` (sharing/schema.py): rag/statusChanged and rag/indexStatus send an
    IndexStatus with its display, and every case's status as serialised validates against it."""
    import jsonschema

    from ragls.sharing.schema import protocol_schema

    schema = protocol_schema()
    assert schema["methods"]["rag/statusChanged"] == {"kind": "notification", "params": {"$ref": "#/$defs/IndexStatus"}}
    assert schema["methods"]["rag/indexStatus"]["result"] == {"$ref": "#/$defs/IndexStatus"}
    defs = schema["$defs"]
    assert defs["IndexStatus"]["properties"]["display"] == {"$ref": "#/$defs/StatusDisplay"}
    assert "display" in defs["IndexStatus"]["required"]  # the server always writes every field
    assert defs["StatusDisplay"]["properties"]["health"]["enum"] == ["ok", "indexing", "warning", "error"]
    assert "query" in defs["RetrieveParams"]["required"] and "topK" not in defs["RetrieveParams"]["required"]
    validator = jsonschema.Draft202012Validator({**defs["IndexStatus"], "$defs": defs})
    for case in CASES["cases"]:
        sent = IndexStatus.model_validate({**CASES["base"], **case["status"]}).model_dump(by_alias=True, mode="json")
        validator.validate(sent)
    bad = IndexStatus.model_validate(CASES["base"]).model_dump(by_alias=True, mode="json")
    bad["display"]["health"] = "ready"
    assert list(validator.iter_errors(bad)), "a health the schema does not have is refused"
