"""Queries read a frozen view (index/view.py): the chunks of the worker's last published records
only. A batch writes a file's new points before it deletes the old ones and publishes the
records after both; a question asked in that window must not see the file twice."""

from __future__ import annotations

import uuid
from pathlib import Path

from ragls.config import Settings
from ragls.index.worker import Indexer
from ragls.query.answer import answer
from ragls.store.base import PointData
from ragls.text.lexical import sparse_vector
from tests.waiting import until

SRC = '''def invoice_total(lines):
    """The sum of an invoice's line amounts."""
    return sum(line.amount for line in lines)
'''


def test_a_point_written_before_its_record_is_published_is_not_seen(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "billing.py").write_text(SRC)
    (ws / "other.py").write_text("def unrelated():\n    return 0\n")
    settings = Settings.model_validate({"cacheDir": str(tmp_path / "cache"), "indexing": {"watch": False}})
    idx = Indexer(ws, settings)
    idx.start()
    try:
        until(lambda: idx.snapshot().state == "ready", 120)
        h = idx.handle
        assert h.store is not None
        published = idx.state.published
        assert published is not None
        ids = published.records["billing.py"].chunk_ids
        (old,) = [s for s in h.store.retrieve(list(ids)) if s.payload["path"] == "billing.py"][:1]
        # The first half of a batch that rewrites billing.py: its new point, stored, with the
        # record that names it not yet published (the old point is still there too).
        text = old.payload["text"] + "\n# invoice total, rewritten\n"
        new_id = str(uuid.uuid4())
        h.store.upsert([PointData(new_id, sparse_vector(text), {**old.payload, "text": text}, None)])

        raw = h.store.retrieve([old.id, new_id])
        assert {s.id for s in raw} == {old.id, new_id}  # the store itself has both versions
        res = answer(h, settings.retrieval, ws, "invoice total rewritten", 10, 4000)
        assert res.error is None and [c.path for c in res.chunks].count("billing.py") == 1, res.chunks
        assert "rewritten" not in res.context  # the unpublished version is not seen
        view = h.view()
        assert [s.id for s in view.retrieve([old.id, new_id])] == [old.id]
    finally:
        idx.stop(timeout=30)
