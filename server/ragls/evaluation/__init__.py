"""Project evaluation: golden sets, metrics, BM25 baselines, and the `ragls eval` runner."""
