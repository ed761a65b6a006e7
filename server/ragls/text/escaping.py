"""The one escaping of everything ragls writes as text for a model or a person: the
`<rag_context>` block (LSP `rag/retrieve`, MCP, CLI), the MCP tools' text and the CLI's messages.

Two kinds of untrusted text end up there, both chosen by whoever wrote the workspace:

- chunk text (file content): many lines, shown as it is, except that it can never open or close
  a `rag_context`/`code_context` tag (`neutralise`);
- labels (file names, symbols, Markdown headings, warnings and errors that quote them): one line
  each (`label`), and XML-escaped where they are attribute values (`attr`).

A model does not parse XML: it reads `＜/rag‐context＞`, `</rag-context>`, `</rаg_context>` with a
Cyrillic `а`, or a tag with zero-width characters inside, as the tag. So the detection folds every
character the way a reader would (NFKD compatibility forms, case, accents, Unicode's confusables
for the letters involved, invisible characters dropped, dashes/underscores/spaces alike, between
the words or between any two letters, as in `</c o d e _ c o n t e x t>`) and the
match's opening bracket becomes `&lt;`: plain ASCII that no normalisation turns back into a
bracket, so neutralising twice changes nothing and an already neutralised text stays inert.
Ordinary `<` in code (generics, comparisons, HTML) is left alone.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from html import escape
from pathlib import Path

from ragls.text import escaping_table

# Look-alikes of the characters that spell the two tags, from Unicode's confusables (UTS #39,
# confusables.txt as shipped by the `confusable-homoglyphs` package), less those that the
# NFKD + casefold folding below already maps (fullwidth, mathematical alphanumerics, roman
# numerals). Kept here as a table: only these dozen characters matter, and a runtime dependency
# for them would pull in a 900 KB table.
_LOOKALIKES: dict[str, str] = {
    "a": "\u0251\u0391\u03b1\u0410\u0430\u13aa\u15c5\u237a\ua4ee\U000102a0\U00016f40\U0001d6a8\U0001d6c2"
    "\U0001d6e2\U0001d6fc\U0001d71c\U0001d736\U0001d756\U0001d770\U0001d790\U0001d7aa",
    "c": "\u03f2\u03f9\u0421\u0441\u13df\u1d04\u2ca4\u2ca5\ua4da\uabaf\U000102a2\U00010302\U00010415"
    "\U0001043d\U0001051c\U000118e9\U000118f2\U0001f74c",
    "d": "\u0501\u13a0\u13e7\u146f\u15de\u15ea\ua4d2\ua4d3",
    "e": "\u0395\u0415\u0435\u04bd\u13ac\u212e\u22ff\u2d39\ua4f0\uab32\U00010286\U000118a6\U000118ae"
    "\U0001d6ac\U0001d6e6\U0001d720\U0001d75a\U0001d794",
    "g": "\u018d\u0261\u050c\u0581\u13c0\u13f3\u1d83\ua4d6",
    "n": "\u039d\u0578\u057c\u2c9a\ua4e0\U00010513\U0001d6b4\U0001d6ee\U0001d728\U0001d762\U0001d79c",
    "o": "0\u039f\u03bf\u03c3\u041e\u043e\u0555\u0585\u05e1\u0647\u0665\u06be\u06c1\u06d5\u06f5\u07c0"
    "\u0966\u09e6\u0a66\u0ae6\u0b20\u0b66\u0be6\u0c02\u0c66\u0c82\u0ce6\u0d02\u0d20\u0d66\u0d82\u0e50"
    "\u0ed0\u101d\u1040\u10ff\u12d0\u1d0f\u1d11\u2c9e\u2c9f\u2d54\u3007\ua4f3\uab3d\ufba6\ufba7\ufba8"
    "\ufba9\ufbaa\ufbab\ufbac\ufbad\ufee9\ufeea\ufeeb\ufeec\U00010292\U000102ab\U00010404\U0001042c"
    "\U000104c2\U000104ea\U00010516\U000114d0\U000118b5\U000118c8\U000118d7\U000118e0\U0001d6b6"
    "\U0001d6d0\U0001d6d4\U0001d6f0\U0001d70a\U0001d70e\U0001d72a\U0001d744\U0001d748\U0001d764"
    "\U0001d77e\U0001d782\U0001d79e\U0001d7b8\U0001d7bc\U0001d7ce\U0001d7d8\U0001d7e2\U0001d7ec"
    "\U0001d7f6\U0001ee24\U0001ee64\U0001ee84\U0001fbf0",
    "r": "\u01a6\u0433\u13a1\u13d2\u1587\u1d26\u2c85\ua4e3\uab47\uab48\uab81\U000104b4\U00016f35\U0001d216",
    "t": "\u03a4\u0422\u13a2\u22a4\u27d9\u2ca6\ua4d4\U00010297\U000102b1\U00010315\U000118bc\U00016f0a"
    "\U0001d6bb\U0001d6f5\U0001d72f\U0001d769\U0001d7a3\U0001f768",
    "x": "\u00d7\u03a7\u0425\u0445\u1541\u157d\u166d\u166e\u16b7\u2573\u292b\u292c\u2a2f\u2cac\u2d5d"
    "\ua4eb\ua7b3\U00010290\U000102b4\U00010317\U00010322\U00010527\U000118ec\U0001d6be\U0001d6f8"
    "\U0001d732\U0001d76c\U0001d7a6",
    # Brackets: the confusables of `<`, plus the angle brackets a reader takes for one.
    "<": "\u02c2\u1438\u16b2\u2039\u276e\U0001d236\u00ab\u27e8\u27ea\u3008\u300a\u276c\u2770\u29fc\u2991",
    "/": "\\\u1735\u2041\u2044\u2215\u2571\u27cb\u29f8\u2cc6\u2f03\u3033\u30ce\u31d3\u4e3f\U0001d23a",
    # Separators: the confusables of `-`, `_` and `.` that are not dashes or connectors already.
    " ": ".\u00b7\u2022\u2027\u2219\u22c5\u30fb\u02d7\u06d4\u2043\u2212\u2796\u2cba\u07fa\u0660\u06f0"
    "\u0701\u0702\ua4f8\ua60e\U00010a50\U0001d16d",
}
_SEPARATOR_CATEGORIES = frozenset({"Pd", "Pc", "Zs", "Zl", "Zp"})
# Dropped by the folding: marks (accents, variation selectors), format characters (zero-width,
# bidi controls, tag characters) and the letters that render as nothing at all.
_INVISIBLE_CATEGORIES = frozenset({"Mn", "Me", "Cf"})
_BLANK_LETTERS = "\u115f\u1160\u3164\uffa0\u2800\u034f"
# Shown as escapes in labels: anything that breaks, reorders or hides part of a line.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})
_NAMES = ("rag", "code")
_SCANNED = (range(0x20000), range(0xE0000, 0xE1000))  # every character that folds to Latin (planes 0, 1, 14)
_AMP_LT = "&lt;"


def _fold(ch: str) -> str:
    """What a reader takes `ch` for: NFKD, casefolded, marks and invisibles dropped, look-alikes
    mapped to the letter they imitate, separators to one space."""
    out: list[str] = []
    for c in unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", ch).casefold()):
        if unicodedata.category(c) in _INVISIBLE_CATEGORIES or c in _BLANK_LETTERS:
            continue
        out.append(_plain(_REVERSE.get(c, c)))
    return "".join(out)


def _plain(c: str) -> str:
    return " " if c.isspace() or unicodedata.category(c) in _SEPARATOR_CATEGORIES else c


def _readings(ch: str) -> set[str]:
    """Everything `ch` may be read as: the letter it imitates (the Greek lunate sigma `ϲ` is a
    `c`) and what its folded form reads as (the same `ϲ` decomposes to a final sigma, which
    casefolds to `σ`, an `o` look-alike). A character may belong to several classes."""
    folded = ch.casefold()
    if folded == ch and ch not in _REVERSE and not unicodedata.decomposition(ch):
        # Most characters have nothing to undo; skipping NFKD for them saves a third of the build.
        invisible = unicodedata.category(ch) in _INVISIBLE_CATEGORIES or ch in _BLANK_LETTERS
        return {"" if invisible else _plain(ch)}
    direct = {_plain(_REVERSE[c]) for c in (ch, folded) if c in _REVERSE}
    return direct | {_fold(ch)}


_REVERSE: dict[str, str] = {
    v: k for k, vs in _LOOKALIKES.items() for ch in vs for v in {ch, ch.casefold()} if len(v) == 1
}


def _char_class(chars: list[str]) -> str:
    """A regex character class of `chars`, as ranges of consecutive code points."""
    cps = sorted({ord(c) for c in chars})
    parts: list[str] = []
    i = 0
    while i < len(cps):
        j = i
        while j + 1 < len(cps) and cps[j + 1] == cps[j] + 1:
            j += 1
        lo, hi = re.escape(chr(cps[i])), re.escape(chr(cps[j]))
        parts.append(lo if i == j else f"{lo}-{hi}")
        i = j + 1
    return "[" + "".join(parts) + "]"


def warm() -> None:
    """Build the detector now (the server's preload thread), not in the first answer."""
    _patterns()


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(the tag detector, the hidden characters of a label), from the running Python's Unicode
    tables, so the compatibility forms of newer Unicode versions come with each Python. Building
    them scans 135,000 characters (~0.3 s of CPU, in every server, CLI and MCP process), so the
    sources built under one Unicode version are kept in text/escaping_table.py and used when the
    running Python has that version (tests/unit/test_escaping_table.py rebuilds and compares)."""
    if unicodedata.unidata_version == escaping_table.UNIDATA_VERSION:
        tag, hidden = escaping_table.TAG, escaping_table.HIDDEN
    else:
        tag, hidden = build()
    return re.compile(tag), re.compile(hidden)


def build() -> tuple[str, str]:
    """The sources of `_patterns`, built from the running Python's Unicode tables."""
    wanted = set("ragcodentx</")
    classes: dict[str, list[str]] = {k: [] for k in wanted}
    invisible: list[str] = []
    separator: list[str] = []
    hidden: list[str] = [chr(c) for c in range(0xD800, 0xE000)]  # lone surrogates (undecodable names)
    for block in _SCANNED:
        for cp in block:
            ch = chr(cp)
            category = unicodedata.category(ch)
            if category in ("Cn", "Cs", "Co"):
                continue  # unassigned, surrogates and private use read as nothing in particular
            if category in _HIDDEN_CATEGORIES:
                hidden.append(ch)
            readings = _readings(ch)
            if "" in readings:
                invisible.append(ch)
            for f in readings & wanted:
                classes[f].append(ch)
            if any(f and not f.strip() for f in readings):
                separator.append(ch)
    # Possessive: linear on any run of blanks. No blank reads as a letter, bracket or slash too,
    # so a run taken whole never holds the character the next step needs; and a run cannot pass a
    # bracket, so scans from two brackets never cover the same text.
    gap = _char_class(invisible + separator) + "*+"

    def word(name: str) -> str:
        # A reader joins letters spaced out by separators (`c o-d.e`) as readily as the two words.
        return gap.join(_char_class(classes[c]) for c in name)

    names = "|".join(word(n) for n in _NAMES)
    tag = (
        f"(?P<open>{_char_class(classes['<'])}){gap}(?:{_char_class(classes['/'])}{gap})?"
        f"(?:{names}){gap}{word('context')}"
    )
    return tag, _char_class(hidden)


def neutralise(text: str, bracket: str = _AMP_LT) -> str:
    """Chunk text that cannot open or close a `rag_context`/`code_context` tag, in any spelling:
    the bracket of each tag-like spelling becomes `bracket` (`&lt;/code_context>`); the rest of
    the text is unchanged."""
    return _patterns()[0].sub(lambda m: bracket + m.group(0)[m.end("open") - m.start() :], text)


_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(m: re.Match[str]) -> str:
    """A hidden character as Python writes it in a string literal: `\\x00`, `\\u202e`, `\\udc80`."""
    ch = m.group(0)
    return _SHORT_ESCAPES.get(ch) or ch.encode("unicode_escape", "backslashreplace").decode("ascii")


def _one_line(text: str, bracket: str) -> str:
    # Tags are found before the invisible characters inside them become visible escapes.
    return _patterns()[1].sub(_visible, neutralise(text, bracket))


def label(text: str) -> str:
    """A name or message as one visible line: tag spellings neutralised, and every control,
    line or paragraph separator, bidi control, zero-width or other invisible format character
    shown as its escape (`\\n`, `\\u202e`), so a name cannot add lines, hide or reorder text."""
    return _one_line(text, _AMP_LT)


def attr(text: str) -> str:
    """`label` as a double-quoted XML attribute value: the brackets of tag spellings become
    `<` and are escaped with everything else (`&lt;`, not `&amp;lt;`)."""
    return escape(_one_line(text, "<"), quote=True)


def write_table(path: Path | None = None) -> None:
    """Rebuild text/escaping_table.py under the running Python's Unicode version."""
    path = path or Path(__file__).with_name("escaping_table.py")
    tag, hidden = build()
    path.write_text(
        '"""The sources of escaping.py\'s two patterns, built under the Unicode version below: a process\n'
        "whose Python has that version compiles them instead of building them (~0.3 s). Generated by\n"
        '`python -m ragls.text.escaping`; tests/unit/test_escaping_table.py rebuilds them and compares."""\n\n'
        f"UNIDATA_VERSION = {unicodedata.unidata_version!r}\n"
        f"TAG = {tag!a}\n"
        f"HIDDEN = {hidden!a}\n"
    )


if __name__ == "__main__":
    write_table()
