"""The command line's workspace: folders named on the command line opened as the language
server opens them (workspace/index.py), waited on until indexed, with progress on stderr. Shared
by `ragls index`, `search`, `feedback` and `eval --feedback`."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ragls.text.escaping import label

if TYPE_CHECKING:
    from ragls.feedback.store import FeedbackRecord
    from ragls.protocol import IndexStatus
    from ragls.workspace.index import WorkspaceIndex


def root_dir(arg: str) -> Path:
    root = Path(arg).expanduser().resolve()
    if not root.is_dir():
        raise SystemExit(f"ragls: {label(arg)} is not a directory")
    return root


def rated_folder(arg: str) -> tuple[Path, list[FeedbackRecord]]:
    """A command's folder and its ratings; a folder that is none, or ratings that cannot be
    read, end the command with why (`ragls feedback --tune`, `ragls eval --feedback`)."""
    from ragls.feedback import store

    root = root_dir(arg)
    try:
        return root, store.load(root)
    except store.FeedbackStoreError as exc:
        raise SystemExit(f"ragls: {label(str(exc))}") from exc


def root_dirs(args: list[str]) -> list[Path]:
    roots = list(dict.fromkeys(root_dir(a) for a in args))
    if not roots:
        raise SystemExit("ragls: name at least one folder")
    return roots


def exit_on_settings_error(message: str) -> None:
    raise SystemExit(f"ragls: {label(message)}")


async def open_workspace(roots: list[Path], quiet: bool = False) -> WorkspaceIndex:
    """The workspace of these folders (one or several, as in a multi-root editor), each owned by
    this process or by the ragls process that owns it (an editor, an agent's `ragls mcp`), once
    every folder is up to date."""
    from ragls.workspace.index import WorkspaceIndex

    ws = WorkspaceIndex(on_settings_error=exit_on_settings_error)
    for root in roots:
        ws.add_path(root)
    ws.folders.renest()
    ws.load_all_settings()
    await ws.start()
    await indexed(ws, quiet)
    return ws


async def indexed(ws: WorkspaceIndex, quiet: bool) -> IndexStatus:
    """Wait until no folder indexes, showing progress on stderr (unless quiet); the status."""
    from ragls.status import indexing, progress_message

    t0 = time.monotonic()
    tty = sys.stderr.isatty()
    last_key: tuple[object, ...] = ()
    last_print = 0.0
    while True:
        s = (await ws.status()).status
        if not indexing(s):
            break
        await asyncio.sleep(0.2)
        key = (s.phase, s.lexical.done, s.dense.done, s.files_total, s.chunks)
        now = time.monotonic()
        # A terminal gets a live line; a log gets a line only when counts move, at most every 2 s.
        if quiet or key == last_key or (not tty and now - last_print < 2):
            continue
        line = f"{s.phase:<11} {progress_message(s)}  chunks {s.chunks}  {now - t0:5.1f}s"
        print(("\r" if tty else "") + line, end="" if tty else "\n", file=sys.stderr, flush=True)
        last_key, last_print = key, now
    if not quiet and tty:
        print(file=sys.stderr)
    # A fault that waits (full disk, paused provider) still leaves a searchable index; only an
    # index that could not open at all ends here.
    for f, entry in zip(ws.folders.items, s.folders, strict=True):
        own = f.role != "client"
        if entry.nested_in is None and entry.state == "error" and entry.phase == "error" and own:
            await asyncio.to_thread(ws.close)
            raise SystemExit(f"ragls: {label(s.message or s.state)}")
    return s
