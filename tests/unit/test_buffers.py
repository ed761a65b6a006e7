"""Open editor buffers, held once per folder and process (sharing/buffers.py): the latest edit wins, a
closed buffer reverts to another editor's, then to the file."""

from __future__ import annotations

from ragls.sharing.api import LOCAL
from ragls.sharing.buffers import Buffers


def test_the_latest_edit_wins_and_closing_reverts_to_the_next() -> None:
    b = Buffers()
    b.open("a.py", "mine", LOCAL)
    b.open("a.py", "theirs", "client-1")
    assert b.winner("a.py") == "theirs"
    b.open("a.py", "mine again", LOCAL)  # edited here after: this one wins
    assert b.winner("a.py") == "mine again"
    assert b.close("a.py", LOCAL) and b.winner("a.py") == "theirs"
    assert not b.close("a.py", LOCAL)  # not open here any more
    assert b.close("a.py", "client-1") and b.winner("a.py") is None  # the file on disk
    assert b.paths() == []


def test_a_source_that_goes_away_takes_its_buffers_along() -> None:
    b = Buffers()
    b.open("a.py", "one", "client-1")
    b.open("b.py", "two", "client-1")
    b.open("b.py", "local", LOCAL)
    assert sorted(b.drop("client-1")) == ["a.py", "b.py"]
    assert b.winner("a.py") is None and b.winner("b.py") == "local"
    assert b.of(LOCAL) == {"b.py": "local"} and b.of("client-1") == {}
