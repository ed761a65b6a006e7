"""Chunking: source text -> chunks, by language (tree-sitter, markdown sections, windows)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragls.chunking.code import SPECS, code_chunks
from ragls.chunking.markdown import markdown_chunks
from ragls.chunking.model import Chunk
from ragls.chunking.text import window_chunks
from ragls.config import IndexingSettings
from ragls.text.languages import refine_language

if TYPE_CHECKING:
    from tree_sitter import Node

    from ragls.chunking.syntax import SyntaxReader

__all__ = [
    "CHUNKS_VERSION",
    "MAX_CHUNKS_PER_FILE",
    "SUPPORTED_CODE_LANGUAGES",
    "Chunk",
    "TooManyChunks",
    "check_budget",
    "chunk_file",
]

SUPPORTED_CODE_LANGUAGES = sorted(SPECS)

# One file's budget, whatever the settings say. A syntax tree takes ~20x its text in memory (2 MB
# of Python: 40 MB; a 49 MB file took 3 GB), so longer texts go by line windows, which hold the
# text and little more. And a file is not indexed past this many chunks: each costs its payload,
# its vectors and an embedding (a 1M-line file gave 25k chunks, 1.2 GB), while the densest source
# files have a few thousand (numpy's __init__.pyi: 1,639).
SYNTAX_MAX_CHARS = 2_000_000
MAX_CHUNKS_PER_FILE = 10_000
# Raised when the same text is split differently: indexes chunked before re-chunk every file
# once (index/apply.py's prepare rules). 2: preprocessor conditionals and namespace macros.
CHUNKS_VERSION = 2


class TooManyChunks(ValueError):
    """The file would take more than MAX_CHUNKS_PER_FILE chunks: it is not indexed."""


def check_budget(language: str, text: str, settings: IndexingSettings | None = None) -> None:
    """TooManyChunks at once, before the text is scanned or split, where line windows of it
    would already be too many (a log, a data file: the usual way to exceed the budget)."""
    s = settings or IndexingSettings()
    if language in SPECS and len(text) <= SYNTAX_MAX_CHARS:
        return  # a syntax tree's chunks are counted once made
    windows = text.count("\n") // max(1, s.window_lines - s.window_overlap)
    if windows > MAX_CHUNKS_PER_FILE:
        raise TooManyChunks(f"about {windows} line windows, more than {MAX_CHUNKS_PER_FILE}")


def chunk_file(
    path: str,
    language: str,
    text: str,
    settings: IndexingSettings | None = None,
    trees: list[tuple[SyntaxReader, Node]] | None = None,
) -> list[Chunk]:
    """Split one file's text into chunks; never raises on odd input, except TooManyChunks.
    `trees`, when given, receives the syntax tree the chunks were cut from (none for a file
    that was not parsed), for the graph facts read from the same parse (ingest/prepare.py)."""
    check_budget(language, text, settings)
    chunks = _chunks(path, language, text, settings or IndexingSettings(), trees)
    if len(chunks) > MAX_CHUNKS_PER_FILE:
        raise TooManyChunks(f"{len(chunks)} chunks, more than {MAX_CHUNKS_PER_FILE}")
    return chunks


def _chunks(
    path: str, language: str, text: str, s: IndexingSettings, trees: list[tuple[SyntaxReader, Node]] | None = None
) -> list[Chunk]:
    language = refine_language(path, language, text)
    if language in SPECS and len(text) <= SYNTAX_MAX_CHARS:
        try:
            return code_chunks(
                path,
                language,
                text,
                s.max_chunk_chars,
                s.min_chunk_chars,
                s.window_lines,
                s.window_overlap,
                s.small_class_chars,
                trees,
            )
        except (ValueError, RecursionError, LookupError):
            pass  # fall through to windows: a grammar hiccup must not lose the file
    if language == "markdown":
        return markdown_chunks(path, text, s.max_chunk_chars, s.window_lines, s.window_overlap)
    return window_chunks(path, language, text.split("\n"), s.window_lines, s.window_overlap, s.max_chunk_chars)
