"""The BM25 baselines of `ragls eval`: the lexical retrievers ragls has to beat, over
60-line windows and over one document per function. The index itself is ragls.text.bm25."""

from __future__ import annotations

from ragls.text.bm25 import BM25Index, Document, ScoredDocument, Tokenizer, simple_tokenize

__all__ = [
    "BM25Index",
    "Document",
    "ScoredDocument",
    "Tokenizer",
    "function_documents",
    "simple_tokenize",
    "windows",
]


def windows(path: str, text: str, size: int = 60, overlap: int = 0) -> list[Document]:
    """Split a file into windows of `size` lines that share `overlap` lines.

    Lines are the pieces between '\\n' (a trailing newline does not start a new line), ranges
    are 1-based and inclusive, and the last window ends at the last line."""
    if size < 1 or not 0 <= overlap < size:
        raise ValueError(f"need size >= 1 and 0 <= overlap < size, got {size=}, {overlap=}")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    step = size - overlap
    docs: list[Document] = []
    start = 0
    while start < len(lines):
        end = min(start + size, len(lines))
        chunk = "\n".join(lines[start:end])
        docs.append(Document(f"{path}:{start + 1}-{end}", path, start + 1, end, chunk))
        if end == len(lines):
            break
        start += step
    return docs


# Function values that are definitions when bound to a name (`const f = () => ...`).
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})


def function_documents(path: str, language: str | None, text: str, size: int = 60) -> list[Document]:
    """One document per function (outermost definitions and class methods; a nested function
    stays inside its parent), over the same grammar tables ragls chunks with. A file without
    functions (or in a language without a grammar) falls back to `size`-line windows, so the
    rest of the project stays searchable."""
    from tree_sitter_language_pack import get_parser

    from ragls.chunking.code import SPECS

    spec = SPECS.get(language or "")
    if spec is None:
        return windows(path, text, size)
    kinds = spec.functions
    source = text.encode("utf-8", "surrogatepass")
    try:
        root = get_parser(language).parse(source).root_node  # type: ignore[arg-type]
    except (ValueError, LookupError):
        return windows(path, text, size)
    lines = text.split("\n")
    docs: list[Document] = []
    stack = [root]
    while stack:
        node = stack.pop()
        bound = (
            node.type in _FUNCTION_VALUES
            and node.parent is not None
            and node.parent.type
            in (
                "variable_declarator",
                "assignment_expression",
                "pair",
            )
        )
        if node.type in kinds or bound:
            start, end = node.start_point[0], node.end_point[0]
            if node.end_point[1] == 0 and end > start:
                end -= 1
            body = "\n".join(lines[start : end + 1])
            docs.append(Document(f"{path}:{start + 1}-{end + 1}", path, start + 1, end + 1, body))
            continue  # nested functions belong to this one
        stack.extend(node.children)
    if not docs:
        return windows(path, text, size)
    docs.sort(key=lambda d: d.start_line)
    return docs
