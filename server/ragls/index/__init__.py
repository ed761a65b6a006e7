"""The index of one folder, in parts a reader can take one at a time:

- `state.py`: what is known about every file (records, pending work, skips, failures, open
  buffers, errors, counters), written by the worker thread only; what it publishes after each
  step (`Published`) is what the status and queries read, without a lock.
- `handle.py`: the open resources (store, manifest, embedding cache, embedder, breaker, git
  history) and the index folder's life; queries read through it, never through the worker.
- `plan.py`: what a scan has to do, decided without I/O.
- `apply.py`: every store and manifest write of the lexical pass, in crash-safe order, and
  `reconcile` on open.
- `lexical_pass.py`: scans, change sets and the lexical pass (in this thread or worker processes).
- `backfill.py`: dense vectors for the chunks stored without one.
- `jobs.py`: the worker's inbox, coalesced, and other threads' edits of the state.
- `worker.py`: `Indexer`, the worker thread's loop, its `Phase` and fault model.

Nothing is imported here, so importing one part does not load the others."""
