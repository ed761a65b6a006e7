"""What a query says, read from its words alone: the code names it spells out (`query_symbols`),
whether it is a lookup of a name (`lookup_symbols`), and what it asks about (tests, declarations,
release history, repository process files) for the demotions and the learned ranker's
`QueryKind`."""

from __future__ import annotations

import re

from ragls.query.features import QueryKind
from ragls.query.mentions import is_long
from ragls.text import lexical

_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)+")
_CALL = re.compile(r"([A-Za-z_$][\w$]*)\s*\(\)")
_QUOTED = re.compile(r"`([^`\s]+)`")
TEST_QUERY = re.compile(
    r"\b(tests?|testing|tested|unit ?tests?|spec|specs|mocks?|mocked|fixtures?|pytest|unittest|jest|mocha|"
    r"assert\w*|expect|benchmarks?)\b",
    re.IGNORECASE,
)
HISTORY_QUERY = re.compile(
    r"\b(change ?logs?|release ?notes?|releases?|released|history|news|when (was|were|did)|which version)\b",
    re.IGNORECASE,
)
META_QUERY = re.compile(
    r"\b(github|gitlab|ci|workflows?|actions?|pipelines?|templates?|contribut\w*|security|vulnerabilit\w*|funding|"
    r"sponsors?|conduct|dependabot|renovate|codeowners|maintainers?|authors?|licen[cs]\w*|copyright|issues?|"
    r"pull requests?|prs?|labels?|copilot|agents?)\b",
    re.IGNORECASE,
)
# A query that names a kind of declaration keeps declarative chunks at full rank.
DECLARATION_QUERY = re.compile(
    r"\b(class(es)?|structs?|interfaces?|enums?|traits?|constants?|records?|protocols?|type alias(es)?)\b",
    re.IGNORECASE,
)


def _code_shaped(ident: str) -> bool:
    """snake_case, camelCase, SCREAMING_CASE with an underscore, or dunder: not an English word."""
    core = ident.strip("_$")
    return bool(core) and ("_" in core or re.search(r"[a-z][A-Z]|[A-Z]{2,}[a-z]{2}", core) is not None or ident != core)


def query_symbols(query: str) -> list[str]:
    """Definition names the query spells out, lowercased: qualified names (`Invoice.total`,
    `pkg::Type`), code-shaped identifiers (`compute_total`, `parseHTTPResponse`), and any
    word written as code (`` `render` ``, `render()`). Plain words, even ones that happen
    to name a function (`define`, `Session`), are left to ranking: in a sentence they are
    far more often English than a reference."""
    names: set[str] = set()
    for m in _DOTTED.finditer(query):
        dotted = re.sub(r"::|#", ".", m.group(0)).strip(".")
        names.add(dotted.lower())
    for m in _QUOTED.finditer(query):
        names.add(re.sub(r"::|#|\(\)$", ".", m.group(1)).strip(".").lower())
    for m in _CALL.finditer(query):
        names.add(m.group(1).lower())
    for ident in lexical.identifiers(query):
        if _code_shaped(ident):
            names.add(ident.lower())
    return sorted(n for n in names if len(n) >= 3)


def code_names(query: str) -> set[str]:
    """The identifiers behind query_symbols, as written (`Invoice.compute_total` -> `Invoice`,
    `compute_total`): the code graph's names are case-sensitive."""
    wanted = {part for name in query_symbols(query) for part in name.split(".")}
    return {ident for ident in lexical.identifiers(query) if ident.lower() in wanted}


# What a lookup says around the name: "where is X defined", "what does X do", "show me X".
_LOOKUP_WORDS = frozenset(
    """
a an the of in on for to is are was does do did me my our i we you it its this that which
where what who how why when show find explain describe open go goto jump see look lookup
definition defined define declared declaration implemented implementation source code
body used usage uses called calls callers caller call referenced references work works
working mean means happen happens handled live lives located location file function
method class type struct interface module constant variable symbol please can could
""".split()
)


def lookup_symbols(query: str) -> list[str]:
    """The names to boost, only when the query is a lookup: names plus lookup words and
    nothing else (`Invoice.compute_total`, `where is parseHTTPResponse defined`, `what does
    render() do`). In a description a name is a reference to related code ("Returns a
    CookieJar from a dict", "like assignIn except ..."), and boosting it was measured to push
    the described function down (boosting every named symbol: dev MRR@10 -0.023, ctxR@4k -0.015)."""
    names = query_symbols(query)
    if not names:
        return []
    for word in re.findall(r"[^\s,;:!?]+", query):
        w = word.strip("`'\"()[]{}.").lower()
        if w and w not in _LOOKUP_WORDS and not any(n in w.replace("::", ".").replace("#", ".") for n in names):
            return []
    return names


def query_kind(query: str, change: bool) -> QueryKind:
    """What the learned ranker knows of the query itself (query.features.QueryKind)."""
    return QueryKind(
        long=is_long(query),
        prose=not query_symbols(query),
        lookup=bool(lookup_symbols(query)),
        change=change,
        asks_tests=bool(TEST_QUERY.search(query)),
        asks_declarations=bool(DECLARATION_QUERY.search(query)),
        asks_history=bool(HISTORY_QUERY.search(query)),
        asks_meta=bool(META_QUERY.search(query)),
        terms=frozenset(lexical.tokenize(query)),
    )
