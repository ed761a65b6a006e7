"""What `ragls mcp` writes for a model to read: each tool's text content beside its
structuredContent, the status in words with what to do next, and the warnings of a search.
Everything a workspace can name (paths, symbols, messages) is a `label`: one line, no tag it
could forge (text/escaping.py)."""

from __future__ import annotations

import mcp_types as types

from ragls.frontends.mcp.tools import CodeResult, FileHit, FilesResult
from ragls.protocol import ChunkOut, FolderStatus, IndexStatus, Location, ReferencesResult, Related, RelatedResult
from ragls.text.escaping import label

CLIENT, OWNER = "client", "owner"  # SharedIndex's roles


def status_text(st: IndexStatus, role: str | None) -> str:
    """The status in words a model can act on. Every value that a workspace can influence
    (paths, messages, warnings, settings) is a `label`: one line, no tag it could forge."""
    skipped = ", ".join(f"{label(k)} {v}" for k, v in sorted(st.skipped_by_reason.items())) or "none"
    lines = [f"Index of {label(st.workspace)}: {label(st.state)} (phase {label(st.phase)})."]
    lines.append(
        f"Files: {st.files_indexed} fully indexed of {st.files_total}, {st.files_failed} failed, "
        f"{st.files_skipped} skipped ({skipped}). Chunks: {st.chunks}. Keyword index: "
        f"{st.lexical.done}/{st.lexical.total} files; semantic (embeddings): {st.dense.done}/{st.dense.total} files."
    )
    lines.append(
        f"Embedder: {label(st.embedder.provider)} {label(st.embedder.model)} ({st.embedder.dimension}-d). "
        f"Store: {label(st.store.kind)} at {label(st.store.location or '(not open yet)')}. "
        f"Last indexed: {label(st.last_indexed_at or 'not yet')}."
    )
    if len(st.folders) > 1:
        lines.extend(_folder_line(f) for f in st.folders)
    if role == CLIENT:
        lines.append("This index is shared: another ragls process on this folder (an editor or agent) serves it.")
    elif role == OWNER:
        lines.append("This process holds the index; editors and agents on the same folder share it.")
    if st.state == "indexing":
        lines.append(
            "What to do: search_code works now (keyword matches first); semantic ranking improves as "
            "embeddings finish. Call index_status again to follow progress."
        )
    elif st.state == "error":
        lines.append(
            f"Problem: {label(st.message or 'unknown error')}. Tell the user; reindex may help once it is fixed."
        )
    else:
        lines.append("What to do: nothing; the index is complete and follows file edits automatically.")
    if st.message and st.state != "error":
        lines.append(f"Note: {label(st.message)}")
    for w in getattr(st, "warnings", None) or []:
        lines.append(f"Warning: {label(w)}")
    if st.errors:
        lines.append(
            "Recent errors: " + "; ".join(f"{label(e.path or '(index)')}: {label(e.message)}" for e in st.errors[-5:])
        )
    return "\n".join(lines)


def _folder_line(f: FolderStatus) -> str:
    """A folder of a multi-folder workspace: its name (what `folders` and path prefixes use)."""
    if f.nested_in is not None:
        return f"Folder {label(f.name)} ({label(f.path)}): inside {label(f.nested_in)}, indexed with it."
    return (
        f"Folder {label(f.name)} ({label(f.path)}): {label(f.state)}, {f.files_indexed} of {f.files_total} files "
        f"fully indexed, {f.files_failed} failed, {f.chunks} chunks."
    )


def shown_path(c: ChunkOut, multi: bool) -> str:
    """A chunk's path as the text shows it: `folder/path` in a workspace of several folders."""
    return f"{c.folder}/{c.path}" if multi and c.folder else c.path


def _subject(subject: str) -> str:
    """The caller's query, quoted on one line (it may quote a hostile file)."""
    return repr(label(subject))


def result_text(kind: str, subject: str, res: CodeResult, multi: bool = False) -> str:
    head = [f"Warning: {label(w)}" for w in res.warnings]
    if not res.chunks:
        return "\n".join([*head, f"No {kind} found for {_subject(subject)}."])
    listing = [
        f"{i}. {label(shown_path(c, multi))}:{c.range.start.line + 1}-{c.range.end.line}"
        + (f" {label(c.symbol)}" if c.symbol else "")
        + f" ({label(c.kind)}, {label(c.language)})"
        for i, c in enumerate(res.chunks, 1)
    ]
    # `context` is format_context's block, escaped where it was made (query/context.py).
    body = res.context or "(the chunks are larger than max_chars; raise it to see their code)"
    return "\n".join([*head, f"{len(res.chunks)} {kind} for {_subject(subject)}:", *listing, "", body])


# Chunks searched per file asked for: several chunks of one file, and demoted tests, fill the
# ranking before the files run out (the commit task ranks files from 50 hits).
FILE_HITS_PER_FILE = 5
PLACES_PER_FILE = 3


def files_of(chunks: list[ChunkOut], top_k: int, multi: bool = False) -> list[FileHit]:
    """Distinct files in the order of their best chunk, each with its first few chunks."""
    files: dict[str, FileHit] = {}
    for c in chunks:
        path = shown_path(c, multi)
        hit = files.get(path)
        if hit is None:
            if len(files) >= top_k:
                continue
            hit = files[path] = FileHit(path=path, uri=c.uri, places=[])
        if len(hit.places) < PLACES_PER_FILE:
            hit.places.append(c)
    return list(files.values())


def files_text(subject: str, res: FilesResult) -> str:
    head = [f"Warning: {label(w)}" for w in res.warnings]
    if not res.files:
        return "\n".join([*head, f"No files found for {_subject(subject)}."])
    lines = [f"{len(res.files)} files for {_subject(subject)}, most likely first:"]
    for i, f in enumerate(res.files, 1):
        places = ", ".join(
            f"{c.range.start.line + 1}-{c.range.end.line}" + (f" {label(c.symbol)}" if c.symbol else "")
            for c in f.places
        )
        lines.append(f"{i}. {label(f.path)} ({places})")
    return "\n".join([*head, *lines])


def tool_error(message: str) -> types.CallToolResult:
    # Errors quote paths, settings and exception text: one line, like every other label.
    return types.CallToolResult(content=[types.TextContent(type="text", text=label(message))], is_error=True)


def status_warnings(st: IndexStatus) -> list[str]:
    out: list[str] = []
    if st.state == "indexing":
        out.append(
            f"the index is still being built ({st.lexical.done}/{st.lexical.total} files keyword-indexed, "
            f"{st.dense.done}/{st.dense.total} embedded): results may be incomplete"
        )
    elif st.state == "error" and st.message:
        out.append(f"the index has a problem: {st.message}")
    if st.message and st.state != "error":
        out.append(st.message)
    out.extend(getattr(st, "warnings", None) or [])
    return out


def _place(path: str, folder: str | None, multi: bool) -> str:
    return label(f"{folder}/{path}" if multi and folder else path)


def _location(loc: Location, multi: bool) -> str:
    held = f" in {label(loc.symbol)}" if loc.symbol else ""
    return f"{_place(loc.path, loc.folder, multi)}:{loc.line} {loc.kind}{held}"


def references_text(symbol: str, res: ReferencesResult, multi: bool = False) -> str:
    head = [f"Warning: {label(w)}" for w in res.warnings]
    if not res.locations:
        return "\n".join([*head, f"No uses of {_subject(symbol)} found."])
    lines = [f"{len(res.locations)} uses of {_subject(symbol)}:"]
    lines += [f"{i}. {_location(loc, multi)}" for i, loc in enumerate(res.locations, 1)]
    return "\n".join([*head, *lines])


def _related(item: Related, multi: bool) -> str:
    name = f"{label(item.symbol)} " if item.symbol else ""
    return f"{name}({_place(item.path, item.folder, multi)}:{item.line})"


def related_text(subject: str, res: RelatedResult, multi: bool = False) -> str:
    head = [f"Warning: {label(w)}" for w in res.warnings]
    lines = [f"Related to {_subject(subject)}:"]
    for title, items in (
        ("Definition", res.definition),
        ("Callers", res.callers),
        ("Callees", res.callees),
        ("Imports", res.imports),
        ("Imported by", res.imported_by),
    ):
        shown = "; ".join(_related(i, multi) for i in items) if items else "none"
        lines.append(f"{title}: {shown}")
    return "\n".join([*head, *lines])
