"""Several folders' answers to one graph question as the workspace's one answer (steps from data
to data; workspace/index.py asks the folders): each item labelled with its folder, the lists
joined in workspace order and cut to the caller's limit, the maps merged by score within the
budget, and the folders' warnings and errors kept."""

from __future__ import annotations

from typing import Any, Protocol

from ragls.graph import outline
from ragls.protocol import ReferencesResult, RelatedResult, RepoMapResult

RELATED_LISTS = ("definition", "callers", "callees", "imports", "imported_by")


class _Folder(Protocol):
    name: str
    uri: str


Answers = list[tuple[_Folder, Any]]


def _labelled(f: _Folder, items: list[Any]) -> list[Any]:
    return [i.model_copy(update={"folder": f.name, "folder_uri": f.uri}) for i in items]


def notes(answers: Answers, multi: bool) -> tuple[list[str], str | None]:
    """The folders' warnings (named by folder when there are several), and `error` only when
    no folder could answer; a folder that could not is a warning, as in retrieval."""
    warnings: list[str] = []
    for f, res in answers:
        said = ([res.error] if res.error else []) + res.warnings
        warnings += [f"{f.name}: {w}" for w in said] if multi else said
    errors = [res.error for _, res in answers]
    if errors and all(errors):
        return [w for _, res in answers for w in res.warnings], "; ".join(e for e in errors if e)
    return warnings, None


def references(answers: Answers, limit: int, multi: bool) -> ReferencesResult:
    out = ReferencesResult(locations=[loc for f, res in answers for loc in _labelled(f, res.locations)])
    out.warnings, out.error = notes(answers, multi)
    if len(out.locations) > limit:
        out.warnings.append(f"{len(out.locations)} uses in the folders: the first {limit}")
        del out.locations[limit:]
    return out


def related(answers: Answers, limit: int, multi: bool) -> RelatedResult:
    lists = {
        name: [i for f, res in answers for i in _labelled(f, getattr(res, name))][:limit] for name in RELATED_LISTS
    }
    warnings, error = notes(answers, multi)
    return RelatedResult(**lists, warnings=warnings, error=error)


def repo_map(answers: Answers, max_tokens: int, multi: bool) -> RepoMapResult:
    """Each folder's map (made for the whole budget) merged by score, each scaled alike (1.0 is
    an average file of its folder), and cut to the budget again."""
    files = [m for f, res in answers for m in _labelled(f, res.files)]
    if len(answers) > 1:
        files = outline.fit(sorted(files, key=lambda m: -m.score), max_tokens, multi)
    text = outline.render(files, multi)
    warnings, error = notes(answers, multi)
    return RepoMapResult(text=text, files=files, tokens=outline.tokens(text), warnings=warnings, error=error)
