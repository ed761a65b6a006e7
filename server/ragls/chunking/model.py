"""The chunk: the unit that is embedded, stored and returned."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


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
        return hashlib.blake2b(self.text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()

    def embedding_text(self) -> str:
        return embedding_text(self.path, self.symbol, self.signature, self.text)


def embedding_text(path: str, symbol: str | None, signature: str | None, text: str) -> str:
    """What the dense model sees: location and qualified symbol, then the code. Display
    always uses the raw text."""
    head = [f"path: {path}"]
    if symbol:
        head.append(f"symbol: {symbol}")
    if signature and not text.lstrip().startswith(signature.strip()):
        head.append(f"signature: {signature.strip()}")
    return "\n".join(head) + "\n" + text
