"""Code-aware lexical vectors: identifiers split on camelCase, PascalCase, snake_case and
kebab-case (the whole identifier kept too), lowercased, keywords and very common tokens
dropped. Term frequencies go into a Qdrant sparse vector whose IDF modifier makes the
engine score it BM25-style."""

from __future__ import annotations

import math
import re
import zlib
from collections import Counter

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z][A-Za-z0-9_]*)*|[0-9]+[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

STOPWORDS = frozenset(
    """
a an and are as at be by for from has have how i if in into is it its of on or that the
this to was were what when where which who why will with does do can should would could
return returns self cls this def function func fn var let const new public private
protected static void int str string bool true false none null nil class struct impl
import from package use using namespace end begin else elif then while for do try catch
except finally raise throw throws async await yield lambda pass break continue switch
case default extends implements interface type enum trait mod pub mut ref val object
override final abstract virtual go chan select defer map range func get set
""".split()
)

_MAX_TOKEN_LEN = 64


def split_identifier(ident: str) -> list[str]:
    """`parseHTTPResponse_v2` -> ['parsehttpresponse_v2', 'parse', 'http', 'response', 'v2']."""
    whole = ident.lower()
    parts: list[str] = []
    for piece in re.split(r"[_\-]+", ident):
        parts.extend(p.lower() for p in _CAMEL.findall(piece))
    out = [whole] if len(parts) != 1 or parts[0] != whole else []
    out.extend(parts)
    return out


def tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    for m in _IDENT.finditer(text):
        for t in split_identifier(m.group(0)):
            if 2 <= len(t) <= _MAX_TOKEN_LEN and t not in STOPWORDS and not t.isdigit():
                tokens.append(t)
    return tokens


def token_id(token: str) -> int:
    # Stable across processes and machines (unlike hash()); 31 bits keeps it a valid u32.
    return zlib.crc32(token.encode("utf-8")) & 0x7FFFFFFF


def sparse_vector(text: str) -> tuple[list[int], list[float]]:
    """Term-frequency sparse vector, with sub-linear TF so a repeated token can't dominate."""
    counts = Counter(token_id(t) for t in tokenize(text))
    if not counts:
        return [], []
    idx = sorted(counts)
    return idx, [1.0 + math.log(counts[i]) for i in idx]


def query_vector(text: str) -> tuple[list[int], list[float]]:
    ids = sorted({token_id(t) for t in tokenize(text)})
    return ids, [1.0] * len(ids)


def identifiers(text: str) -> list[str]:
    """Identifier-looking words of a query (for symbol boosting)."""
    return [m.group(0) for m in _IDENT.finditer(text) if len(m.group(0)) > 2 and m.group(0).lower() not in STOPWORDS]
