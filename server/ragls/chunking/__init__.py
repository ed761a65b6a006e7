"""Chunking: source text -> chunks, by language (tree-sitter, markdown sections, windows)."""

from __future__ import annotations

from ragls.chunking.code import SPECS, code_chunks
from ragls.chunking.markdown import markdown_chunks
from ragls.chunking.model import Chunk
from ragls.chunking.text import window_chunks
from ragls.config import IndexingSettings
from ragls.languages import refine_language

__all__ = ["SUPPORTED_CODE_LANGUAGES", "Chunk", "chunk_file"]

SUPPORTED_CODE_LANGUAGES = sorted(SPECS)


def chunk_file(path: str, language: str, text: str, settings: IndexingSettings | None = None) -> list[Chunk]:
    """Split one file's text into chunks; never raises on odd input."""
    s = settings or IndexingSettings()
    language = refine_language(path, language, text)
    if language in SPECS:
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
            )
        except (ValueError, RecursionError, LookupError):
            pass  # fall through to windows: a grammar hiccup must not lose the file
    if language == "markdown":
        return markdown_chunks(path, text, s.max_chunk_chars, s.window_lines, s.window_overlap)
    return window_chunks(path, language, text.split("\n"), s.window_lines, s.window_overlap, s.max_chunk_chars)
