"""Code-aware lexical vectors: identifiers split on camelCase, PascalCase, snake_case and
kebab-case (the whole identifier kept too), lowercased, keywords and very common tokens
dropped, word parts reduced by a light English stemmer (`parsed`, `parser`, `parsing` ->
`pars`). Documents carry BM25 term weights (saturated, length-normalised term frequency),
queries carry 1 per distinct term, and Qdrant's IDF modifier supplies the IDF: the dot
product the engine computes is then Okapi BM25 (lexical-only MRR@10 0.426, against 0.243
with 1+log(tf) weights)."""

from __future__ import annotations

import re
import zlib
from collections import Counter
from functools import lru_cache

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

# Abbreviations common in code across languages, with the word a description would use
# (`std` -> "standard logger", `ctx` -> "context"). A token adds its expansion as a second
# term, so the code side meets the English side; generic programming usage only.
ABBREVIATIONS = {
    "addr": "address",
    "alloc": "allocate",
    "arg": "argument",
    "args": "arguments",
    "attr": "attribute",
    "attrs": "attributes",
    "auth": "authentication",
    "buf": "buffer",
    "calc": "calculate",
    "cb": "callback",
    "cfg": "config",
    "char": "character",
    "chars": "characters",
    "cmd": "command",
    "cmp": "compare",
    "cnt": "count",
    "col": "column",
    "conf": "config",
    "ctx": "context",
    "db": "database",
    "dict": "dictionary",
    "dir": "directory",
    "doc": "document",
    "dst": "destination",
    "elem": "element",
    "env": "environment",
    "err": "error",
    "errs": "errors",
    "evt": "event",
    "exec": "execute",
    "expr": "expression",
    "fmt": "format",
    "idx": "index",
    "impl": "implementation",
    "info": "information",
    "init": "initialize",
    "iter": "iterator",
    "kwargs": "keyword",
    "lang": "language",
    "len": "length",
    "lvl": "level",
    "max": "maximum",
    "mgr": "manager",
    "min": "minimum",
    "msg": "message",
    "num": "number",
    "obj": "object",
    "opt": "option",
    "opts": "options",
    "param": "parameter",
    "params": "parameters",
    "pkg": "package",
    "pos": "position",
    "prev": "previous",
    "prop": "property",
    "props": "properties",
    "ptr": "pointer",
    "ref": "reference",
    "refs": "references",
    "regex": "expression",
    "regexp": "expression",
    "repo": "repository",
    "req": "request",
    "res": "response",
    "resp": "response",
    "ret": "result",
    "sep": "separator",
    "seq": "sequence",
    "sig": "signature",
    "spec": "specification",
    "src": "source",
    "std": "standard",
    "sync": "synchronize",
    "tmp": "temporary",
    "usr": "user",
    "util": "utility",
    "utils": "utilities",
    "val": "value",
    "vals": "values",
    "vars": "variables",
}

# BM25 parameters, chosen on a grid over the dev golden sets (k1 0.8-8, b 0.3-1, average length
# 30-200; lexical-only MRR@10 0.394, against 0.257 with 1+log(tf) weights). b = 1 normalises term
# frequency fully by chunk length; a high k1 keeps repeated terms informative. AVG_LEN is a
# fixed average chunk length in tokens (the real one, 30-75 across projects, is unknown
# when a single file is indexed, and a constant keeps a chunk's vector independent of its
# neighbours).
K1 = 5.0
B = 1.0
AVG_LEN = 40.0

# (suffix, replacement, shortest stem left): first match wins, so longer suffixes come first.
_SUFFIXES = (
    ("sses", "ss", 4),
    ("ies", "i", 3),
    ("ness", "", 4),
    ("ments", "", 4),
    ("ment", "", 4),
    ("ations", "ate", 3),
    ("ation", "ate", 3),
    ("ings", "", 3),
    ("ing", "", 3),
    ("ers", "", 3),
    ("ed", "", 3),
    ("er", "", 3),
    ("ors", "", 3),
    ("or", "", 4),
    ("ly", "", 4),
    ("es", "", 3),
    ("s", "", 3),
)


# Cache sizes (this one and _term_ids'): every lexical worker process keeps its own caches, and
# once full they are most of its memory. Measured on half of files10k (one worker's share):
# 200,000 term ids and 100,000 stems left 84 MB of anonymous memory, 50,000 and 20,000 left
# 69 MB, for 2 % more cache misses and the same CPU.
@lru_cache(maxsize=20_000)
def stem(token: str) -> str:
    """Light suffix stripping for lowercase ASCII words, so a query's English
    (`validators are run`) meets the code's identifiers (`run_validators`). Tokens with
    digits, underscores or non-ASCII letters are left alone."""
    t = token
    if len(t) <= 3 or not t.isalpha() or not t.isascii():
        return t
    stripped = False
    for suffix, repl, keep in _SUFFIXES:
        if t.endswith(suffix) and len(t) - len(suffix) >= keep:
            if suffix == "s" and t.endswith(("ss", "us", "is")):
                return t
            t = t[: len(t) - len(suffix)] + repl
            stripped = True
            break
    if t.endswith("e") and len(t) > 4:
        t = t[:-1]
    if t.endswith("y") and len(t) > 3:
        t = t[:-1] + "i"
    if stripped and len(t) >= 4 and t[-1] == t[-2] and t[-1] not in "aeioulsz":
        t = t[:-1]  # running -> runn -> run
    return t


def split_identifier(ident: str) -> list[str]:
    """`parseHTTPResponse_v2` -> ['parsehttpresponse_v2', 'parse', 'http', 'response', 'v2']."""
    whole = ident.lower()
    parts: list[str] = []
    for piece in re.split(r"[_\-]+", ident):
        parts.extend(p.lower() for p in _CAMEL.findall(piece))
    out = [whole] if len(parts) != 1 or parts[0] != whole else []
    out.extend(parts)
    return out


def _split_terms(ident: str) -> tuple[str, ...]:
    out: list[str] = []
    for t in split_identifier(ident):
        if 2 <= len(t) <= _MAX_TOKEN_LEN and not t.isdigit():
            if t not in STOPWORDS:
                out.append(stem(t))
            if t in ABBREVIATIONS:  # `val` is a Kotlin keyword but, as a name, a value
                out.append(stem(ABBREVIATIONS[t]))
    return tuple(out)


@lru_cache(maxsize=100_000)
def _terms(ident: str) -> tuple[str, ...]:
    """The terms of one identifier, for text tokenized as words (queries, the BM25 lexicons)."""
    return _split_terms(ident)


def tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    for m in _IDENT.finditer(text):
        tokens.extend(_terms(m.group(0)))
    return tokens


def token_id(token: str) -> int:
    # Stable across processes and machines (unlike hash()); 31 bits keeps it a valid u32.
    return zlib.crc32(token.encode("utf-8")) & 0x7FFFFFFF


@lru_cache(maxsize=50_000)
def _term_ids(ident: str) -> tuple[int, ...]:
    # Not through _terms' cache: in front of it this one answers every repeat (the lexical
    # workers never hit it, and it held 14 MB in each).
    return tuple(token_id(t) for t in _split_terms(ident))


def sparse_vector(text: str) -> tuple[list[int], list[float]]:
    """BM25 document weights tf*(k1+1) / (tf + k1*(1 - b + b*len/AVG_LEN)): repeated terms
    saturate, and a long chunk does not win just by containing more words."""
    # Term ids cached per identifier: the same identifiers recur across a project's chunks,
    # so most of a chunk costs a dictionary lookup (the lexical pass's workers spend a
    # quarter of their time here; the cache took a chunk from 165 to 118 µs).
    ids: list[int] = []
    extend = ids.extend
    for ident in _IDENT.findall(text):
        extend(_term_ids(ident))
    if not ids:
        return [], []
    counts = Counter(ids)
    norm = K1 * (1.0 - B + B * len(ids) / AVG_LEN)
    idx = sorted(counts)
    k1 = K1 + 1.0
    return idx, [counts[i] * k1 / (counts[i] + norm) for i in idx]


def query_vector(text: str) -> tuple[list[int], list[float]]:
    ids = sorted({token_id(t) for t in tokenize(text)})
    return ids, [1.0] * len(ids)


def identifiers(text: str) -> list[str]:
    """Identifier-looking words of a query (for symbol boosting)."""
    return [m.group(0) for m in _IDENT.finditer(text) if len(m.group(0)) > 2 and m.group(0).lower() not in STOPWORDS]
