"""The LSP front end: `server.py` (pygls lifecycle, settings, buffers, the `rag/*` handlers) and
`progress.py` (`rag/statusChanged` and `$/progress`)."""
