"""Docs match code: every setting is documented with its real default."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel

from ragls.config import SENSITIVE, Settings, flat_schema

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _settings(model: BaseModel, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for name, field in type(model).model_fields.items():
        key = prefix + (field.alias or name)
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            out.update(_settings(value, key + "."))
        else:
            out[key] = value
    return out


def test_configuration_doc_lists_every_setting_with_its_default() -> None:
    text = (DOCS / "configuration.md").read_text()
    rows = dict(re.findall(r"^\| `([\w.]+)` \| `([^`]*)` \|", text, re.M))
    actual = _settings(Settings())
    assert set(actual) == set(rows), set(actual) ^ set(rows)
    for key, value in actual.items():
        assert json.loads(rows[key]) == value, key


def test_configuration_doc_meanings_are_the_schema_descriptions() -> None:
    """The table's meaning column is the schema's description (the docstring under each field
    in config.py), marked *sensitive.* exactly for the sensitive keys."""
    text = (DOCS / "configuration.md").read_text()
    rows = dict(re.findall(r"^\| `([\w.]+)` \| `[^`]*` \| (.*) \|$", text, re.M))
    schema = flat_schema()
    assert list(rows) == list(schema), "the table lists the settings in the schema's order"
    for key, prop in schema.items():
        marked = rows[key].startswith("*sensitive.* ")
        assert marked == bool(prop.get(SENSITIVE)), key
        assert rows[key].removeprefix("*sensitive.* ") == prop["description"], key


def _doc_fields(section: str) -> list[str]:
    """The backticked names in the first column of the first table after `section`."""
    text = (DOCS / "protocol.md").read_text()
    start = text.index(section)
    table = re.search(r"\n(\|.*\|\n)+", text[start:])
    assert table
    names: list[str] = []
    for cell in re.findall(r"^\| ([^|]+) \|", table.group(0), re.M):
        names += re.findall(r"`(\w+)`", cell)
    return names


def test_protocol_doc_lists_every_payload_field() -> None:
    from ragls.protocol import ChunkOut, IndexStatus, RetrieveResultOut

    def aliases(model: type[BaseModel]) -> set[str]:
        return {f.alias or n for n, f in model.model_fields.items()}

    assert set(_doc_fields("Result (`IndexStatus`)")) == aliases(IndexStatus)
    from ragls.protocol import RetrieveParams

    assert set(_doc_fields("## `rag/retrieve` (request)")) == aliases(RetrieveParams)
    result = _doc_fields("\nResult:\n")
    assert set(result) == aliases(RetrieveResultOut), result
    assert set(_doc_fields("\nChunk:\n")) == aliases(ChunkOut)
    from ragls.protocol import FolderStatus

    assert set(_doc_fields("\n`FolderStatus`:\n")) == aliases(FolderStatus)


def test_protocol_doc_lists_the_code_graph_fields() -> None:
    from ragls.protocol import Location, ReferencesParams, RelatedResult

    def aliases(model: type[BaseModel]) -> set[str]:
        return {f.alias or n for n, f in model.model_fields.items()}

    assert set(_doc_fields("`rag/references` params:")) == aliases(ReferencesParams)
    assert set(_doc_fields("each location:")) == aliases(Location)
    assert set(_doc_fields("each a list of `{symbol, path, line, folder, folderUri}`:")) == aliases(RelatedResult) - {
        "warnings",
        "error",
    }


def test_protocol_doc_lists_the_feedback_params() -> None:
    from ragls.protocol import FeedbackParams, FeedbackResult

    assert set(_doc_fields("## `rag/feedback` (request)")) == {
        f.alias or n for n, f in FeedbackParams.model_fields.items()
    }
    text = (DOCS / "protocol.md").read_text()
    assert "Result `{" + ", ".join(f.alias or n for n, f in FeedbackResult.model_fields.items()) + "}`" in text


def test_feedback_doc_lists_every_stored_and_replayed_field() -> None:
    from ragls.feedback.records import FeedbackRecord
    from ragls.frontends.cli.feedback_replay import Case

    text = (DOCS / "feedback.md").read_text()
    stored = set(re.findall(r"`(\w+)`", text[text.index("## What is stored") : text.index("Questions and comments")]))
    assert {f.alias or n for n, f in FeedbackRecord.model_fields.items()} - {"version"} <= stored
    replayed = _doc_fields_in(text, "each case:")
    assert set(replayed) == {f.alias or n for n, f in Case.model_fields.items()} - {"moved"}


def _doc_fields_in(text: str, section: str) -> list[str]:
    table = re.search(r"\n(\|.*\|\n)+", text[text.index(section) :])
    assert table
    return [
        name for cell in re.findall(r"^\| ([^|]+) \|", table.group(0), re.M) for name in re.findall(r"`(\w+)`", cell)
    ]


def test_feedback_doc_lists_the_tuning_result() -> None:
    from ragls.frontends.cli.feedback_tuning import TuneResult

    text = (DOCS / "feedback.md").read_text()
    section = text[text.index("## Tuning from your ratings") : text.index("## Listing and replaying")]
    listed = section[section.index("`--json` prints") :]
    listed = listed[: listed.index("}")]
    assert set(re.findall(r'"(\w+)"', listed)) == {f.alias or n for n, f in TuneResult.model_fields.items()}
