"""The language server's reports of the workspace's indexing: `rag/statusChanged` on every state or
phase change (and at most twice a second while counts move), and one `$/progress`
begin/report/end per run over the summed counters, for clients that declared
`window.workDoneProgress`."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from ragls.workspace.index import WorkspaceIndex

log = logging.getLogger("ragls")

STATUS_INTERVAL = 0.5  # seconds between rag/statusChanged while counts move
PROGRESS_INTERVAL = 0.25


async def report_status(ws: WorkspaceIndex, ls: LanguageServer) -> None:
    """Turn the workspace's status into $/progress and rag/statusChanged for `ls`'s client,
    throttled; woken early by every change of an index (`WorkspaceIndex.changed`)."""
    from ragls.status import indexing, progress_end_message, progress_message, progress_percentage

    token: str | None = None
    last_key: tuple[str, str] | None = None
    last_counts: tuple[int, ...] | None = None
    last_sent = 0.0
    seen_runs = 0
    seen_folders: list[str] = []
    loop = asyncio.get_running_loop()
    caps = ls.client_capabilities.window
    supports_progress = bool(caps and caps.work_done_progress)
    while True:
        try:
            await asyncio.wait_for(ws.changed.wait(), PROGRESS_INTERVAL)
        except TimeoutError:
            pass
        ws.changed.clear()
        try:
            env = await ws.status(foreground=False)
            st, runs = env.status, env.runs
            key = (st.state, st.phase)
            counts = (st.files_total, st.lexical.done, st.dense.done, st.files_failed, st.chunks, len(st.folders))
            now = loop.time()
            if key != last_key or (counts != last_counts and now - last_sent >= STATUS_INTERVAL):
                ls.protocol.notify("rag/statusChanged", st.model_dump(by_alias=True))
                last_key, last_counts, last_sent = key, counts, now
            if not supports_progress:
                continue
            pct = progress_percentage(st)
            msg = progress_message(st)
            # A run that finished between two polls (everything cached) still gets its
            # begin/end pair, so clients always see indexing start and end.
            runs = runs if any(f.shared for f in ws.folders.items) else seen_runs
            folders = [f.name for f in ws.folders.indexed]
            # A removed folder takes its runs out of the sum: that is no run to report.
            missed = runs != seen_runs and not (folders != seen_folders and runs < seen_runs)
            seen_runs, seen_folders = runs, folders
            if (indexing(st) or missed) and token is None:
                token = str(uuid.uuid4())
                try:
                    await asyncio.wait_for(ls.work_done_progress.create_async(token), 5)
                except Exception:  # the client refused the token: no progress UI then
                    token = None
                    supports_progress = False
                    continue
                begin = f"0/{st.files_total} files" if st.files_total else "discovering files"
                ls.work_done_progress.begin(
                    token,
                    types.WorkDoneProgressBegin(
                        title="ragls: indexing", message=begin, percentage=0, cancellable=False
                    ),
                )
            elif indexing(st) and token is not None:
                ls.work_done_progress.report(token, types.WorkDoneProgressReport(message=msg, percentage=min(pct, 99)))
            if not indexing(st) and token is not None:
                end = progress_end_message(st)
                if st.files_total:  # the final count, also for runs too short for a report
                    done = st.dense.done + st.files_failed
                    ls.work_done_progress.report(
                        token, types.WorkDoneProgressReport(message=f"{done}/{st.files_total} files", percentage=100)
                    )
                ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=end))
                token = None
        except Exception:  # one bad tick must not end status reporting for the session
            log.exception("status reporting failed; continuing")
            await asyncio.sleep(1.0)
