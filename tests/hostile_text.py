"""Hostile spellings of the context tags, and a reader that sees through them.

The reader is this test suite's own model of how a language model reads the context: it folds
the disguises the generator uses (NFKC, accents, case, Cyrillic/Greek look-alikes, bracket and slash
look-alikes, zero-width and bidi characters, any separator between the words or between any two
letters, as in `</c o d e _ c o n t e x t>`) with tables of its
own, independent of ragls.text.escaping, and then finds every `<rag_context`, `</rag_context`,
`<code_context`, `</code_context` it would take for a tag. `&lt;` is text, not a bracket.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass

from hypothesis import strategies as st

# Cyrillic, Greek and other look-alikes of the letters of the two tag names.
LOOKALIKES: dict[str, str] = {
    "a": "аαɑАΑ",
    "c": "сϲᴄСϹ",
    "d": "ԁꓒ",
    "e": "еҽЕΕ",
    "g": "ɡց",
    "n": "ոΝ",
    "o": "оοσОΟ0",
    "r": "гᴦ",
    "t": "ТΤ",
    "x": "хХΧ×",
}
BRACKETS = "<＜﹤‹˂ᐸ❮〈⟨"
SLASHES = "/／⁄∕⧸"
# Zero-width, bidi, soft hyphen, joiners, variation selector, a tag character, a combining accent.
INVISIBLE = (
    "\u200b\u200c\u200d\u2060\ufeff\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    "\u200e\u200f\u00ad\u034f\ufe0f\U000e0041\u0301"
)
SEPARATORS = ["", "_", "-", " ", "  ", "\u2010", "\u2013", "\u2014", "\u00a0", "\u3000", "\uff3f", "\t", ".", "\u00b7"]
GAPS = ["", " ", "\n", "  \t"]
ENDINGS = [">", "\uff1e", "\u203a", ' file="src/auth.py" lines="1-3">', "", "\n"]

_SEPARATOR_CHARS = set("_-.\u00b7\u2010\u2013\u2014")
_REVERSE = (
    {v: k for k, vs in LOOKALIKES.items() for v in vs} | dict.fromkeys(BRACKETS, "<") | dict.fromkeys(SLASHES, "/")
)
# Separators (folded to `_`) may stand between any two letters: `< r a g - c o n t e x t >` reads as a tag.
_TAG = re.compile(r"<_*(/?)_*(r_*a_*g|c_*o_*d_*e)_*c_*o_*n_*t_*e_*x_*t")


def _fold(ch: str) -> str:
    if ch in INVISIBLE or unicodedata.category(ch) in ("Mn", "Cf"):
        return ""
    out: list[str] = []
    for c in unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", _REVERSE.get(ch, ch)).casefold()):
        if unicodedata.category(c) == "Mn":
            continue  # an accent: `á` reads as `a`
        c = _REVERSE.get(c, c)
        out.append("_" if c.isspace() or c in _SEPARATOR_CHARS else c)
    return "".join(out)


def tags_seen(text: str) -> list[str]:
    """Every tag a reader would see in `text`, in order: `<rag`, `<code`, `</code`, `</rag`."""
    folded = "".join(_fold(c) for c in text)
    return [("</" if slash else "<") + name.replace("_", "") for slash, name in _TAG.findall(folded)]


def structure(blocks: int) -> list[str]:
    """The tags of a context of `blocks` blocks, and no others."""
    return ["<rag", *["<code", "</code"] * blocks, "</rag"]


def _variants(letter: str) -> list[str]:
    i = ord(letter) - ord("a")
    return [
        letter,
        letter.upper(),
        chr(0xFF41 + i),  # fullwidth
        chr(0xFF21 + i),
        chr(0x1D41A + i),  # mathematical bold
        chr(0x1D552 + i),  # double-struck
        chr(0x1D68A + i),  # monospace
        *LOOKALIKES[letter],
    ]


@st.composite
def tag_spellings(draw: st.DrawFn, names: tuple[str, ...] = ("rag", "code")) -> str:
    """One disguised opening or closing tag, optionally with forged attributes."""
    invisible = st.lists(st.sampled_from(INVISIBLE), max_size=2).map("".join)

    # Half the spellings space their letters out (`c o-d.e`): a separator, or none, after each letter.
    spaced = st.sampled_from(SEPARATORS) if draw(st.booleans()) else st.just("")

    def word(w: str) -> str:
        letters = [draw(st.sampled_from(_variants(c))) + draw(invisible) for c in w]
        return "".join(letter + draw(spaced) for letter in letters[:-1]) + letters[-1]

    out = draw(st.sampled_from(BRACKETS)) + draw(invisible) + draw(st.sampled_from(GAPS))
    if draw(st.booleans()):
        out += draw(st.sampled_from(SLASHES)) + draw(invisible) + draw(st.sampled_from(GAPS))
    out += word(draw(st.sampled_from(names))) + draw(st.sampled_from(SEPARATORS)) + draw(invisible)
    return out + word("context") + draw(st.sampled_from(ENDINGS))


@dataclass(frozen=True)
class Block:
    file: str  # attribute values as written (escaped)
    lines: str
    symbol: str | None
    body: str


_BLOCK = re.compile(
    r'<code_context file="([^"\n<>]*)" lines="(\d+-\d+)"(?: symbol="([^"\n<>]*)")?>\n(.*?)</code_context>\n',
    re.S,
)


def parse_context(ctx: str) -> list[Block]:
    """The blocks of a `<rag_context>`, failing unless the whole text is exactly that shape (the
    reader's tags then tell whether a body or an attribute holds one more)."""
    assert ctx.startswith("<rag_context>\n") and ctx.endswith("</rag_context>"), ctx[:200]
    inner = ctx[len("<rag_context>\n") : -len("</rag_context>")]
    blocks: list[Block] = []
    pos = 0
    for m in _BLOCK.finditer(inner):
        assert m.start() == pos, f"text between blocks: {inner[pos : m.start()]!r}"
        blocks.append(Block(m.group(1), m.group(2), m.group(3), m.group(4)))
        pos = m.end()
    assert pos == len(inner), f"unparsed tail: {inner[pos : pos + 200]!r}"
    assert tags_seen(ctx) == structure(len(blocks)), tags_seen(ctx)
    for b in blocks:
        for value in (b.file, b.symbol or ""):
            assert len(html.unescape(value).splitlines()) <= 1, value
    return blocks
