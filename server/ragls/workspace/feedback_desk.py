"""The workspace's feedback desk: each answer of this process remembered by its resultId (what it
showed, per folder asked), and a rating of one stored in its folders' feedback files
(store.py, docs/feedback.md). Kept apart from the workspace object, which only hands it the
answers and the ratings."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragls.feedback.answers import Answers

if TYPE_CHECKING:
    from ragls.protocol import FeedbackParams, FeedbackResult, RetrieveResultOut
    from ragls.workspace.folders import Folder
    from ragls.workspace.open_folders import WorkspaceFolders

log = logging.getLogger("ragls")


class FeedbackDesk:
    def __init__(self, ws: WorkspaceFolders) -> None:
        self.ws = ws
        self.answers = Answers()  # this process's last answers by resultId

    def remember(
        self, res: RetrieveResultOut, method: Any, query: str, asked: list[tuple[Folder, Any, list[str] | None]]
    ) -> RetrieveResultOut:
        """Give the answer a resultId and remember what it showed, per folder asked; not when
        rating is off for every folder (`feedback.enabled`) or nothing could be searched."""
        from ragls.feedback.answers import Answer, Part, model_of, stored_chunks
        from ragls.feedback.records import StoredSettings
        from ragls.protocol import RetrieveParams
        from ragls.sharing.api import budget

        asked = [(f, q, g) for f, q, g in asked if f.settings.feedback.enabled]
        if not asked or (res.error and not res.chunks):
            return res
        shown = stored_chunks(res.chunks)
        multi = len(asked) > 1
        parts: list[Part] = []
        for f, q, globs in asked:
            rs = (self.ws.settings if multi else f.settings).retrieval
            if isinstance(q, RetrieveParams):
                st = StoredSettings(
                    top_k=budget(q, rs)[0], intent=q.intent, paths=globs, languages=q.languages, mode=rs.mode
                )
            else:
                st = StoredSettings(top_k=q.top_k, mode=rs.mode, kind=q.kind)
            parts.append(Part(f.name, f.path, st, model_of(f.settings), shown.get(f.name, [])))
        res.result_id = self.answers.remember(Answer(method, query, parts))
        return res

    async def rate(self, p: FeedbackParams) -> FeedbackResult:
        """Store a rating of a remembered answer in its folders' feedback files (docs/feedback.md).
        InvalidParams for an unknown (or forgotten) resultId and for a mark outside the folders
        the question searched."""
        from ragls.feedback import store
        from ragls.feedback.answers import SIZE, records
        from ragls.protocol import FeedbackResult
        from ragls.sharing.api import InvalidParams

        answer = self.answers.get(p.result_id)
        if answer is None:
            raise InvalidParams(
                f"resultId: {p.result_id!r} is not an answer of this server, or an old one (it remembers its "
                f"last {SIZE} answers)"
            )
        marks = self._marks(answer, p)
        current = {f.path: f for f in self.ws.folders.items}
        enabled = [
            part for part in answer.parts if (f := current.get(part.root)) is None or f.settings.feedback.enabled
        ]
        if not enabled:
            return FeedbackResult(stored=False, message="rating is off (feedback.enabled is false): nothing stored")
        answer = type(answer)(answer.method, answer.query, enabled)
        made = await asyncio.to_thread(records, p.result_id, answer, p.rating, marks, p.comment)
        stored: list[str] = []
        problems: list[str] = []
        for part, record in made:
            try:
                await asyncio.to_thread(store.save, part.root, record)
                stored.append(part.name)
            except store.FeedbackStoreError as exc:
                log.warning("feedback not stored: %s", exc)
                problems.append(str(exc))
        return FeedbackResult(stored=bool(stored), folders=stored, message="; ".join(problems) or None)

    def _marks(self, answer: Any, p: FeedbackParams) -> dict[str, list[Any]]:
        """The relevant locations by folder name, each relative to its folder."""
        from ragls.feedback.records import Mark
        from ragls.sharing.api import InvalidParams, safe_rel
        from ragls.workspace.folders import uri_to_path

        parts = {part.root: part for part in answer.parts}
        out: dict[str, list[Mark]] = {}
        for i, loc in enumerate(p.relevant or []):
            raw = loc.path
            where = f"relevant.{i}.path: {raw!r}"
            found: list[tuple[Any, str]] = []
            absolute = uri_to_path(raw) if raw.startswith("file:") else Path(raw) if Path(raw).is_absolute() else None
            if absolute is not None:
                absolute = absolute.resolve()
                found = [
                    (part, absolute.relative_to(root).as_posix())
                    for root, part in parts.items()
                    if absolute.is_relative_to(root)
                ]
            else:
                try:
                    rel = safe_rel(raw)
                except InvalidParams as exc:
                    raise InvalidParams(f"{where} must be a workspace-relative or absolute path") from exc
                for f, r in (
                    self.ws.folders.route(rel) if self.ws.folders.multi else [(f, rel) for f in self.ws.folders.indexed]
                ):
                    part = parts.get(f.path)
                    if part is not None and r:
                        found.append((part, r))
                if len(found) > 1:  # a plain path in several folders: where the file is
                    found = [(part, r) for part, r in found if (part.root / r).is_file()] or found[:1]
            if not found:
                raise InvalidParams(f"{where} is not in a folder this answer searched")
            part, rel = found[0]
            out.setdefault(part.name, []).append(Mark(path=rel, line=loc.line))
        return out
