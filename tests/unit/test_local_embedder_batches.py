"""The bundled model's batch plan: the indexer embeds a window of chunks group by group, so each
group must be one bounded ONNX call, and group-by-group must give the vectors of one call."""

from __future__ import annotations

import itertools

import numpy as np

from ragls.config import EmbedderSettings
from ragls.embedding import make_embedder
from ragls.embedding.onnx_local import _TOKEN_BUDGET


def _texts() -> list[str]:
    # Lengths from a line to past the truncation limit, in no particular order.
    return [f"def f{i}(x):\n" + "    x = x + 1  # step\n" * ((i * 7) % 60) + "    return x\n" for i in range(70)]


def test_groups_cover_every_text_once_within_the_token_budget_and_batch_size() -> None:
    emb = make_embedder(EmbedderSettings())
    texts = _texts()
    groups = emb.batches(texts)
    assert sorted(i for g in groups for i in g) == list(range(len(texts)))
    lengths = [len(e.ids) for e in emb._tok.encode_batch(texts)]  # type: ignore[attr-defined]
    assert max(lengths) == EmbedderSettings().max_tokens  # some texts are truncated
    for g in groups:
        assert len(g) <= EmbedderSettings().batch_size
        assert len(g) * max(lengths[i] for i in g) <= _TOKEN_BUDGET
    # By length: a later group never holds a shorter text than an earlier one.
    widths = [(min(lengths[i] for i in g), max(lengths[i] for i in g)) for g in groups]
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(widths))
    # Full calls: fewer groups than fixed slices of the batch size, each split by the budget.
    assert len(groups) < sum(len(emb.batches(texts[i : i + 16])) for i in range(0, len(texts), 16))


def test_embedding_group_by_group_gives_the_vectors_of_one_call() -> None:
    emb = make_embedder(EmbedderSettings())
    texts = _texts()[::3]  # every length class, in fewer model calls
    assert len(emb.batches(texts)) >= 3
    whole = emb.embed_documents(texts)
    parts = np.zeros_like(whole)
    for g in emb.batches(texts):
        parts[g] = emb.embed_documents([texts[i] for i in g])
    assert np.allclose(parts, whole, atol=1e-5)
