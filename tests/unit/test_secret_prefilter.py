"""The redaction prefilter may only skip text the secret-line regex cannot match."""

from __future__ import annotations

import random
import re
import sys

from ragls.secrets import _SECRET_LINE, may_hold_secret, redact

SAMPLES = [
    "-----BEGIN RSA PRIVATE KEY-----",
    "token = ghp_" + "a" * 30,
    "x github_pat_" + "B_" * 12,
    "AKIAABCDEFGHIJKLMNOP",
    "ASIA0123456789ABCDEF,",
    "sk-proj-" + "x" * 24,
    "sk-ant-" + "y" * 24,
    "xoxb-" + "1" * 12,
    "AIza" + "Z" * 35,
    "glpat-" + "q" * 22,
    "npm_" + "N" * 36,
    'PASSWORD = "hunter22x"',
    "passwd: 'abcdefgh'",
    'Secret="12345678"',
    "API-KEY = '0123456789'",
    'apikey:"abcdefghij"',
    'Access_Token = "zzzzzzzz"',
    "authtoken='qwertyuiop'",
]


def _case_equivalents() -> dict[str, list[str]]:
    """Every character the regex's case-insensitive branch equates with each letter of its keywords."""
    out: dict[str, list[str]] = {}
    for letter in sorted(set("passwordsecretapikeyaccesstokenauth")):
        r = re.compile(f"(?i:{letter})")
        out[letter] = [chr(c) for c in range(sys.maxunicode + 1) if r.fullmatch(chr(c))]
    return out


def test_every_branch_passes_the_prefilter() -> None:
    for s in SAMPLES:
        for text in (s, f"é {s}", f"line one\n  {s}\nline three"):
            assert _SECRET_LINE.search(text), text
            assert may_hold_secret(text), text
            assert redact(text)[1] == 1


def test_unicode_case_variants_of_keywords_pass_the_prefilter() -> None:
    eq = _case_equivalents()
    assert "\u017f" in eq["s"] and "\u212a" in eq["k"] and "\u0131" in eq["i"]  # the regex's own view
    rng = random.Random(7)
    keyword_lines = [s for s in SAMPLES if "=" in s or ":" in s]
    for s in keyword_lines:
        for letter_pos in range(len(s)):
            ch = s[letter_pos].lower()
            for variant in eq.get(ch, []):
                text = "résumé\n" + s[:letter_pos] + variant + s[letter_pos + 1 :]
                if _SECRET_LINE.search(text):
                    assert may_hold_secret(text), ascii(text)
    # Random mixtures of the special characters over whole keywords.
    for _ in range(2000):
        s = rng.choice(keyword_lines)
        text = "".join(rng.choice(eq[c.lower()]) if c.lower() in eq and rng.random() < 0.5 else c for c in s)
        if _SECRET_LINE.search(text):
            assert may_hold_secret(text), ascii(text)


def test_plain_code_skips_the_regex() -> None:
    code = "def parse(tokens):\n    return [t.upper() for t in tokens]\n"
    assert not may_hold_secret("def f(x):\n    return x + 1\n")
    assert not may_hold_secret('fn main() { println!("héllo"); }')
    assert may_hold_secret(code.replace("tokens", "auth_token"))  # a keyword: the regex decides
    assert redact(code.replace("tokens", "auth_token"))[1] == 0
