"""The pure parts of ragls.feedback: ranks of marked locations, the replay's comparison, the MRR,
the answers remembered (bounded), the records made from a rating (redacted, per folder), and the
store's bound, replacement, privacy and erasure on a real folder."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from ragls.feedback import store
from ragls.feedback.answers import Answer, Answers, Part, records
from ragls.feedback.records import (
    FeedbackRecord,
    IndexVersion,
    Mark,
    StoredChunk,
    StoredSettings,
    best,
    chunk_key,
    mrr,
    rank_of,
    ranks_of,
)
from ragls.frontends.cli.feedback_replay import compare, summary

TOKEN = "ghp_8fK2mQ9xLr4TzV1bN7cY3wHs6JdP0aEu5GiO"


def _chunk(path: str, start: int, end: int) -> StoredChunk:
    return StoredChunk(path=path, start_line=start, end_line=end, id=chunk_key(path, start, end, "x"))


def _record(rid: str, chunks: list[StoredChunk], marks: list[Mark] | None = None, rating: str = "up") -> FeedbackRecord:
    return FeedbackRecord(
        id=rid,
        time="2026-01-01T00:00:00Z",
        rating=rating,  # type: ignore[arg-type]
        method="rag/retrieve",
        query="q",
        folder="ws",
        settings=StoredSettings(top_k=5),
        index=IndexVersion(ragls="0", protocol=6, model="m"),
        chunks=chunks,
        relevant=marks or [],
    )


def test_a_chunk_covering_the_marked_line_counts() -> None:
    chunks = [_chunk("a.py", 1, 10), _chunk("b.py", 5, 9), _chunk("b.py", 20, 30)]
    assert rank_of(chunks, Mark(path="b.py", line=5)) == 2
    assert rank_of(chunks, Mark(path="b.py", line=25)) == 3
    assert rank_of(chunks, Mark(path="b.py", line=12)) is None
    assert rank_of(chunks, Mark(path="c.py", line=1)) is None
    assert ranks_of(chunks, [Mark(path="b.py", line=25), Mark(path="a.py", line=1)]) == [3, 1]
    assert best([None, 3, 2]) == 2 and best([None]) is None
    assert mrr([1, 2, None]) == pytest.approx((1 + 0.5) / 3) and mrr([]) is None


def test_the_replay_says_what_changed() -> None:
    live = [_chunk("a.py", 1, 10), _chunk("b.py", 5, 9)]
    marked = _record("1", live, [Mark(path="b.py", line=6)])
    same = compare(marked, list(live))
    assert (same.rank, same.live_rank, same.changed, same.moved) == (2, 2, False, [])
    # The marked place moved to the top: it changed, and the case says which mark moved.
    up = compare(marked, [live[1], live[0]])
    assert up.changed and up.rank == 1 and [(m.path, m.line, m.live, m.now) for m in up.moved] == [("b.py", 6, 2, 1)]
    # Another place below the mark changed: the answer did, the mark's rank did not.
    other = compare(marked, [live[0], live[1], _chunk("c.py", 1, 2)])
    assert other.answer_changed and not other.changed
    # A down rating without a mark: changed when the ranked locations differ.
    down = _record("2", live, rating="down")
    assert not compare(down, list(live)).changed
    assert compare(down, [_chunk("a.py", 1, 11), live[1]]).changed
    rep = summary(Path("/ws"), [same, up, compare(down, list(live))])
    assert rep.mrr == pytest.approx((0.5 + 1) / 2) and rep.live_mrr == pytest.approx(0.5) and rep.changed == 1
    assert set(rep.model_dump(by_alias=True)["cases"][0]) >= {"query", "rating", "ranks", "rank", "changed"}


def test_answers_are_remembered_up_to_the_bound() -> None:
    answers = Answers(size=3)
    ids = [answers.remember(Answer("rag/retrieve", f"q{i}", [])) for i in range(3)]
    assert len(set(ids)) == 3 and all(len(i) == 24 for i in ids)
    assert answers.get(ids[0]) is not None  # used: now the newest
    answers.remember(Answer("rag/retrieve", "q3", []))
    assert answers.get(ids[1]) is None  # the oldest unused one went
    assert answers.get(ids[0]) is not None and answers.get(ids[2]) is not None


def _part(name: str, chunks: list[StoredChunk]) -> Part:
    return Part(name, Path("/" + name), StoredSettings(top_k=5), "m", chunks)


def test_a_rating_is_redacted_and_filed_per_folder() -> None:
    answer = Answer(
        "rag/retrieve", f"why does login fail with {TOKEN}", [_part("api", [_chunk("a.py", 1, 2)]), _part("web", [])]
    )
    made = records("rid", answer, "down", {}, f"token {TOKEN}", now=0)
    # Only the folder whose chunks were shown (or that holds a mark) gets the record.
    assert [p.name for p, _ in made] == ["api"]
    rec = made[0][1]
    assert TOKEN not in rec.query and TOKEN not in (rec.comment or "") and rec.redacted
    assert rec.time == "1970-01-01T00:00:00Z" and rec.index.protocol == 6
    marked = records("rid", answer, "up", {"web": [Mark(path="w.ts", line=3)]}, None)
    assert [p.name for p, _ in marked] == ["api", "web"] and marked[1][1].relevant[0].path == "w.ts"
    assert not marked[0][1].redacted or TOKEN not in marked[0][1].query
    # An empty answer: every folder it searched.
    empty = Answer("rag/retrieve", "nothing", [_part("api", []), _part("web", [])])
    assert [p.name for p, _ in records("rid", empty, "down", {}, None)] == ["api", "web"]


def test_the_store_is_private_bounded_and_erasable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(5):
        store.save(root, _record(str(i), []), limit=3)
    path = store.file_for(root)
    assert path.parent == tmp_path / "state" / "ragls" / "feedback"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [r.id for r in store.load(root)] == ["2", "3", "4"]  # the oldest dropped
    store.save(root, _record("3", [], rating="down"), limit=3)  # a second rating replaces the first
    assert [(r.id, r.rating) for r in store.load(root)] == [("2", "up"), ("4", "up"), ("3", "down")]
    path.write_text(path.read_text() + "not json\n")
    assert len(store.load(root)) == 3  # a damaged line is skipped, the rest still read
    assert store.clear(root) and not path.exists() and store.load(root) == []
    assert not store.clear(root)
    # A state folder made readable by others is closed up on the next write.
    path.parent.chmod(0o755)
    store.save(root, _record("9", []))
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_never_inside_the_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "home" / ".local" / "state"))
    with pytest.raises(store.FeedbackStoreError, match="inside the workspace"):
        store.save(tmp_path / "home", _record("1", []))
    assert not (tmp_path / "home").exists()


def test_the_held_back_share_is_fixed_by_the_questions() -> None:
    from ragls.frontends.cli.feedback_tuning import HELD_BACK, held_back

    questions = [f"where is step {i} of the import handled" for i in range(30)]
    held = held_back(questions)
    assert held == held_back(list(reversed(questions)))  # the order of the ratings does not matter
    assert len(held) == round(HELD_BACK * len(questions))
    # A question rated twice counts twice and is held back (or not) as one: the held-back cases
    # never test what the fit saw.
    twice = questions + questions[:10]
    assert round(HELD_BACK * len(twice)) <= sum(q in held_back(twice) for q in twice) <= len(twice) // 2
