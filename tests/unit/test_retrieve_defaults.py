"""A request that leaves out topK/maxChars gets the server's retrieval settings, as
docs/protocol.md says; one that sends them gets exactly what it asked for."""

from __future__ import annotations

from ragls.protocol import RetrieveParams


def test_unset_fields_are_not_sent_on_to_the_owner() -> None:
    p = RetrieveParams.model_validate({"query": "q"})
    assert p.model_fields_set == {"query"}
    assert p.model_dump(by_alias=True, exclude_unset=True) == {"query": "q"}
    q = RetrieveParams.model_validate({"query": "q", "topK": 5})
    assert "top_k" in q.model_fields_set
