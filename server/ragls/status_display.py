"""What the user sees for an `IndexStatus`: `IndexStatus.display` (docs/clients/status.md).

The server decides it, the clients only show it (rust-analyzer's `serverStatus` shape): a
`health` the client turns into its own icon, a short `text` for the status bar and the `tooltip`
lines. Plain Python on the wire form (camelCase keys), so the pydantic models (protocol.py) and
the plain-JSON `starting` status (frontends/lsp/early_status.py) share it. The case tables
tests/fixtures/status-cases.json and status-folder-cases.json pin every row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _num(n: Any) -> str:
    """`1234 -> "1,234"`, whatever the locale."""
    return f"{round(n or 0):,}"


def display(st: Mapping[str, Any]) -> dict[str, Any]:
    """`{health, text, tooltip}` of a status (the wire form: camelCase keys, missing keys read as
    their protocol defaults)."""
    state, phase = st.get("state"), st.get("phase")
    total = st.get("filesTotal") or 0
    failed = st.get("filesFailed") or 0
    chunks = f"{_num(st.get('chunks'))} chunks"
    if state == "indexing":
        done = min((st.get("filesIndexed") or 0) + failed, total)
        health, text = "indexing", f"{_num(done)}/{_num(total)}" if total > 0 else "indexing"
    elif state == "error":
        # paused (embedding provider down) and waiting (a fault retried with backoff): lexical
        # search still answers, so a warning rather than an error
        soft = phase in ("paused", "waiting")
        health, text = ("warning", phase) if soft else ("error", "error")
    else:
        health = "warning" if failed > 0 or st.get("warnings") else "ok"
        text = f"{chunks}, {_num(failed)} failed" if failed > 0 else chunks
    return {"health": health, "text": text, "tooltip": tooltip(st)}


def tooltip(st: Mapping[str, Any]) -> list[str]:
    lines = [f"State: {st.get('state')} ({st.get('phase')})"]
    if st.get("message"):
        lines.append(str(st["message"]))
    files = f"Files: {_num(st.get('filesIndexed'))}/{_num(st.get('filesTotal'))} indexed"
    if st.get("filesFailed"):
        files += f", {_num(st['filesFailed'])} failed"
    if st.get("filesSkipped"):
        files += f", {_num(st['filesSkipped'])} skipped"
    lines += [files, f"Chunks: {_num(st.get('chunks'))}"]
    folders = st.get("folders") or []
    if len(folders) >= 2:
        lines += [folder_line(f) for f in folders]
    emb = st.get("embedder") or {}
    if emb.get("provider") or emb.get("model"):
        dim = f", {emb['dimension']}-d" if emb.get("dimension") else ""
        lines.append(f"Embedder: {emb.get('provider') or ''} / {emb.get('model') or ''}{dim}")
    store = st.get("store") or {}
    if store.get("kind"):
        lines.append(f"Store: {store['kind']}" + (f" at {store['location']}" if store.get("location") else ""))
    if st.get("lastIndexedAt"):
        lines.append(f"Last indexed: {st['lastIndexedAt']}")
    lines += [f"Warning: {w}" for w in st.get("warnings") or []]
    errors = st.get("errors") or []
    if errors:
        last = errors[-1]
        lines.append(f"Errors: {len(errors)}; last: {last.get('path')}: {last.get('message')}")
    if st.get("version"):
        lines.append(f"Server: ragls {st['version']}")
    return lines


def folder_line(f: Mapping[str, Any]) -> str:
    """One folder of a multi-root workspace (2+ folders)."""
    if f.get("nestedIn"):
        return f"Folder {f.get('name')}: inside {f['nestedIn']}"
    line = (
        f"Folder {f.get('name')}: {f.get('state')} ({f.get('phase')}), "
        f"{_num(f.get('filesIndexed'))}/{_num(f.get('filesTotal'))} files"
    )
    if f.get("filesFailed"):
        line += f", {_num(f['filesFailed'])} failed"
    line += f", {_num(f.get('chunks'))} chunks"
    if f.get("message"):
        line += f"; {f['message']}"
    return line
