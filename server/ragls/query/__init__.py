"""A query against one folder's index, and its answer.

- `retrieval.py`: query -> fused dense + lexical prefetches -> reranks and boosts -> hits.
- `mentions.py`: the files a long query (a bug report, a stack trace) names, and what counts as long.
- `query_embedding.py`: one embedding per query text, shared by the folders of a multi-root request.
- `context.py`: the `<rag_context>` block of the hits, within the budget.
- `answer.py`: a `rag/retrieve` answer from one index, and `fuse` for several folders'.
"""
