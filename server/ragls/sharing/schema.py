"""`ragls schema --protocol`: the JSON Schema of the `rag/*` protocol, from the pydantic models in
protocol.py, by method name (the owner socket's from the index API's method table, sharing/api.py). The
clients' protocol types are generated from it (VS Code, clients/vscode/scripts/gen-protocol.ts)
or checked against it (JetBrains, Neovim) in their tests, as their settings are against
`ragls schema`.

Params are described as the server reads them (validation: a field with a default may be left
out), results and notifications as it writes them (serialization: every field is always sent, so
every field is `required`; a server older than a field does not send it, docs/protocol.md
"Versions").
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, models_json_schema

from ragls import PROTOCOL_VERSION
from ragls.protocol import (
    Empty,
    FeedbackParams,
    FeedbackResult,
    IndexStatus,
    NoParams,
    ReferencesParams,
    ReferencesResult,
    ReindexParams,
    ReindexResult,
    RelatedParams,
    RelatedResult,
    RepoMapParams,
    RepoMapResult,
    RetrieveParams,
    RetrieveResultOut,
)
from ragls.sharing.api import METHODS

_NO_PARAMS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": True}
_EMPTY_RESULT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
_REINDEX_RESULT: dict[str, Any] = {
    "type": "object",
    "title": "ReindexResult",
    "properties": {"started": {"type": "boolean", "title": "Started"}},
    "required": ["started"],
    "additionalProperties": False,
}

# method -> (kind, params, result): a model (params read, results written), or a schema inline
_LSP: dict[str, tuple[str, type[BaseModel] | dict[str, Any], type[BaseModel] | dict[str, Any] | None]] = {
    "rag/retrieve": ("request", RetrieveParams, RetrieveResultOut),
    "rag/indexStatus": ("request", _NO_PARAMS, IndexStatus),
    "rag/reindex": ("request", ReindexParams, _REINDEX_RESULT),
    "rag/references": ("request", ReferencesParams, ReferencesResult),
    "rag/related": ("request", RelatedParams, RelatedResult),
    "rag/repoMap": ("request", RepoMapParams, RepoMapResult),
    "rag/feedback": ("request", FeedbackParams, FeedbackResult),
    "rag/statusChanged": ("notification", IndexStatus, None),
}
# between ragls processes on one folder (docs/owner-socket.md); internal: the index
# API's method table (sharing/api.py), the small models written inline as above
_INLINE: dict[type[BaseModel], dict[str, Any]] = {
    NoParams: _NO_PARAMS,
    Empty: _EMPTY_RESULT,
    ReindexResult: _REINDEX_RESULT,
}
_OWNER: dict[str, tuple[str, type[BaseModel] | dict[str, Any], type[BaseModel] | dict[str, Any] | None]] = {
    m.name: ("request", _INLINE.get(m.params, m.params), _INLINE.get(m.result, m.result)) for m in METHODS.values()
}


class _Written(GenerateJsonSchema):
    """Serialization schemas list every field as required: the server always writes them all."""

    def field_is_required(self, field: Any, total: bool) -> bool:
        if self.mode == "serialization":
            return not field.get("serialization_exclude")
        return super().field_is_required(field, total)


def protocol_schema() -> dict[str, Any]:
    """`{methods, ownerSocket, $defs}`: each method's `kind`, `params` and `result` (a request's)
    as JSON Schema, models by `$ref` into `$defs`."""
    # A notification's params are written by the server: serialization, like a result.
    uses: dict[tuple[type[BaseModel], JsonSchemaMode], None] = {}
    for table in (_LSP, _OWNER):
        for kind, params, result in table.values():
            if isinstance(params, type):
                uses[(params, "serialization" if kind == "notification" else "validation")] = None
            if isinstance(result, type):
                uses[(result, "serialization")] = None
    refs, top = models_json_schema(list(uses), by_alias=True, ref_template="#/$defs/{model}", schema_generator=_Written)

    def ref(part: type[BaseModel] | dict[str, Any], mode: JsonSchemaMode) -> dict[str, Any]:
        return dict(refs[(part, mode)]) if isinstance(part, type) else part

    def methods(table: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, (kind, params, result) in table.items():
            entry: dict[str, Any] = {"kind": kind}
            entry["params"] = ref(params, "serialization" if kind == "notification" else "validation")
            if result is not None:
                entry["result"] = ref(result, "serialization")
            out[name] = entry
        return out

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "ragls rag/* protocol",
        "protocolVersion": PROTOCOL_VERSION,
        "methods": methods(_LSP),
        "ownerSocket": methods(_OWNER),
        "$defs": top.get("$defs", {}),
    }
