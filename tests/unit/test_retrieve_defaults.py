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


def test_unset_fields_take_the_settings_wherever_the_request_is_answered() -> None:
    from ragls.config import RetrievalSettings
    from ragls.sharing.api import budget

    rs = RetrievalSettings(top_k=7, max_chars=1234)
    assert budget(RetrieveParams.model_validate({"query": "q"}), rs) == (7, 1234)
    assert budget(RetrieveParams.model_validate({"query": "q", "topK": 3, "maxChars": 0}), rs) == (3, 0)
    # A multi-folder answer asks each folder for the whole budget: set, so sent on to an owner.
    each = RetrieveParams.model_validate({"query": "q"}).model_copy(update={"top_k": 7, "max_chars": 0})
    assert budget(each, RetrievalSettings()) == (7, 0)
    assert each.model_dump(by_alias=True, exclude_unset=True) == {"query": "q", "topK": 7, "maxChars": 0}


def test_validation_errors_are_one_line_naming_the_field_on_every_face() -> None:
    import pytest

    from ragls.sharing.api import RETRIEVE, InvalidParams, parse_params

    with pytest.raises(InvalidParams) as err:
        parse_params(RETRIEVE, {"query": " ", "topK": 500})
    assert str(err.value) == ("query: Value error, must not be blank; topK: Input should be less than or equal to 100")
    with pytest.raises(InvalidParams, match="params must be an object"):
        parse_params(RETRIEVE, [1])
