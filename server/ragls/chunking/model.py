"""The chunk: the unit that is embedded, stored and returned."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

# Bump when embedding_text() changes: the hash of what is embedded keys the embedding cache
# and the chunk ids, so vectors made from an older text are never reused for a newer one.
EMBED_FORMAT = "2"

_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def split_humps(text: str) -> str:
    """`parseHeaderValue` -> `parse Header Value`. The embedder's tokenizer lowercases before
    WordPiece, so an unsplit camelCase name becomes opaque sub-words (`parseheadervalue` ->
    `parse ##head ##erva ##lue`); split, its words are words the model knows."""
    return _HUMP.sub(" ", text)


@dataclass(frozen=True)
class Chunk:
    path: str  # workspace-relative POSIX path
    language: str
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    kind: str  # function, method, class, class_header, declaration, section, text
    symbol: str | None  # qualified name, e.g. Invoice.compute_total
    text: str  # raw source, exactly lines start..end
    parent: str | None = None  # enclosing class or module symbol
    signature: str | None = None  # first line of the definition (kept for split pieces)
    imports: tuple[str, ...] = field(default=())  # the file's import lines, for context

    @property
    def text_hash(self) -> str:
        """Hash of exactly what the dense model sees (format version included), so the
        embedding cache can never hand out a vector of a different text."""
        return embedding_hash(self.embedding_text())

    def embedding_text(self) -> str:
        return embedding_text(self.path, self.symbol, self.signature, self.text)


def embedding_hash(embedded: str) -> str:
    data = f"{EMBED_FORMAT}\n{embedded}".encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def name_text(symbol: str | None, text: str) -> str:
    """A chunk's name line as the name rerank embeds it (ragls.index.name_rerank): the qualified symbol
    and the first line of its code (a definition's signature), camelCase split like
    embedding_text. A doc sentence paraphrases a function's name, which the whole-chunk vector
    dilutes in the body."""
    stripped = text.strip()
    first = stripped.splitlines()[0][:200] if stripped else ""
    return split_humps("\n".join(x for x in (symbol or "", first) if x))


def embedding_text(path: str, symbol: str | None, signature: str | None, text: str) -> str:
    """What the dense model sees: the qualified symbol, the definition's signature when the
    chunk does not start with it (a later piece of a long function), then the code, with
    camelCase split into words. The path is left out: measured, it costs dense MRR (every
    chunk of a file gets the same leading words); it stays in the lexical text, where it
    helps. Display always uses the raw text."""
    del path  # kept in the signature: callers pass the payload as is
    head = [symbol] if symbol else []
    if signature and not text.lstrip().startswith(signature.strip()):
        head.append(signature.strip())
    return split_humps("\n".join([*head, text]))
