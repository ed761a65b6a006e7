"""Secret detection (ragls.ingest.secrets): detect-secrets as a library behind linear-time RE2 gates.

The gates may only spare lines that no detector would flag: checked by running every detector
on every line (no gates) over the planted-secrets corpus, ordinary code, the library's own
sources and mutated lines, and comparing with what the gated scan finds."""

from __future__ import annotations

import random
import re
import sys
import time
from pathlib import Path

import pytest
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins import keyword as ds_keyword

from ragls.ingest import secret_gates
from ragls.ingest.secret_gates import KEYWORD_DENYLIST, candidates, gates, may_hold_secret
from ragls.ingest.secrets import REDACTED, _line_hit, is_secret_file, redact, scan, secret_lines
from tests.secret_corpus import ORDINARY, SECRET_CONTENT, SECRET_FILE, build
from tests.secret_corpus import REDACTED as KEEP

ALL = [g.detector for g in gates()]
REPO = Path(__file__).resolve().parents[2]
DS_ROOT = Path(ds_keyword.__file__).resolve().parents[1]


def _brute_lines(text: str, path: str) -> dict[int, set[str]]:
    """Line -> detectors that flag it, each detector run on every line, no gate asked."""
    out: dict[int, set[str]] = {}
    for i, line in enumerate(text.split("\n")):
        fired = {d for d in ALL if _line_hit(line, path, [d])}
        if fired:
            out[i] = fired
    return out


def _assert_gates_cover(text: str, path: str) -> int:
    gated = candidates(text)
    brute = _brute_lines(text, path)
    for i, fired in brute.items():
        assert fired <= set(gated.get(i, ())), (path, i, fired, text.split("\n")[i][:200])
    assert set(brute) <= set(secret_lines(text, path))
    return len(brute)


# -- the rule set is the library's ---------------------------------------------------------
def test_every_library_plugin_is_gated_or_deliberately_unused() -> None:
    library = {c.__name__ for c in get_mapping_from_secret_type_to_class().values()}
    gated = {d.removeprefix("lib:") for d in ALL if d.startswith("lib:")}
    assert gated.isdisjoint(secret_gates.LIBRARY_UNUSED)
    assert gated | set(secret_gates.LIBRARY_UNUSED) == library  # an upgrade's new plugin needs a gate
    assert tuple(ds_keyword.DENYLIST) == KEYWORD_DENYLIST


# -- the gates never miss ------------------------------------------------------------------
def test_gates_cover_the_detectors_on_the_corpus() -> None:
    flagged = 0
    for f in build().files:
        flagged += _assert_gates_cover(f.text, f.path)
    assert flagged >= 60


def test_gates_cover_the_detectors_on_ordinary_code() -> None:
    files = sorted((REPO / "tests" / "fixtures" / "polyglot").rglob("*.*"))
    files += [
        REPO / "server" / "ragls" / n
        for n in ("ingest/secrets.py", "ingest/secret_gates.py", "config.py", "text/lexical.py", "ingest/discovery.py")
    ]
    # The library's own sources name every secret shape it looks for: the densest test there is.
    files += [*sorted((DS_ROOT / "plugins").glob("*.py")), DS_ROOT / "filters" / "heuristic.py"]
    flagged = 0
    for p in files:
        flagged += _assert_gates_cover(p.read_text(encoding="utf-8", errors="replace"), p.name)
    for rel, text in ORDINARY:
        assert _assert_gates_cover(text, rel) == 0, rel
    assert flagged > 0  # the library's sources do hold secret-shaped lines


def test_gates_cover_the_detectors_on_mutated_lines() -> None:
    rng = random.Random(3)
    corpus_lines = [line for f in build().files for line in f.text.split("\n") if line.strip()]
    alphabet = "aZ9_-.:=\"' /@+$\u00e9\u017f\u212a\u0131\u0130\n"
    for n in range(1500):
        line = rng.choice(corpus_lines)
        chars = list(line)
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            at = rng.randrange(len(chars) + 1)
            if op < 0.4 and chars:
                del chars[min(at, len(chars) - 1)]
            elif op < 0.7:
                chars.insert(at, rng.choice(alphabet))
            elif chars:
                i = min(at, len(chars) - 1)
                chars[i] = chars[i].swapcase()
        path = rng.choice(["a.py", "a.yaml", "a.ini", "a.go", "a.md", "a.json", ""])
        _assert_gates_cover("".join(chars), path or f"x{n}.txt")


def _case_equivalents() -> dict[str, list[str]]:
    """Every character Python's IGNORECASE equates with each letter (the library's view)."""
    any_letter = re.compile("(?i:[a-z])")
    odd = [chr(c) for c in range(128, sys.maxunicode + 1) if any_letter.fullmatch(chr(c))]
    out: dict[str, list[str]] = {}
    for letter in "abcdefghijklmnopqrstuvwxyz":
        r = re.compile(f"(?i:{letter})")
        out[letter] = [letter, letter.upper(), *(c for c in odd if r.fullmatch(c))]
    return out


def test_unicode_case_variants_of_keywords_pass_the_gates() -> None:
    eq = _case_equivalents()
    odd = {c for cs in eq.values() for c in cs if not c.isascii()}
    assert odd == {"\u0130", "\u0131", "\u017f", "\u212a"}  # İ ı ſ K: the cases RE2 must be helped with
    samples = [
        'db_password = "Tr0ub4dor&3xyz"',
        "SECRET_KEY: 's3cr3tS1gn1ngK3yV4lue'",
        'api_key = "a8f5f167f44f4964e6c998dee827110c"',
        "contrasena: 'hunter2hunter2'",
        "slack: xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx",
    ]
    rng = random.Random(7)
    for s in samples:
        for pos, ch in enumerate(s):
            for variant in eq.get(ch.lower(), []):
                _assert_gates_cover(s[:pos] + variant + s[pos + 1 :], "a.yaml")
        for _ in range(200):
            mixed = "".join(rng.choice(eq[c.lower()]) if c.lower() in eq and rng.random() < 0.3 else c for c in s)
            _assert_gates_cover(mixed, "a.yaml")


# -- what is and is not a secret -----------------------------------------------------------
def test_the_corpus_leaves_nothing_behind() -> None:
    corpus = build()
    assert len(corpus.secrets) >= 40
    for f in corpus.files:
        if f.outcome == SECRET_FILE:
            assert is_secret_file(f.path), f.path
            continue
        assert not is_secret_file(f.path), f.path
        r = scan(f.text, f.path)
        assert r.secret_content == (f.outcome == SECRET_CONTENT), (f.path, r.lines)
        assert corpus.leaks(r.text) == [], f.path
        assert f.marker in r.text  # only secret lines go: the file's own words stay
        if f.outcome == KEEP:
            assert r.text.count("\n") == f.text.count("\n") and REDACTED in r.text


def test_ordinary_code_keeps_every_line_and_skips_the_library() -> None:
    for rel, text in ORDINARY:
        assert redact(text, rel) == (text, 0), rel
    plain = "def parse(tokens):\n    return [t.upper() for t in tokens]\n"
    assert not may_hold_secret(plain) and not may_hold_secret('fn main() { println!("héllo"); }')
    assert may_hold_secret(plain + "password = 'x'\n")  # a keyword: the detector decides
    assert redact(plain + "password = 'x'\n", "a.py")[1] == 0  # too short to be one


def test_redaction_keeps_line_numbers_and_indentation() -> None:
    text = "def f():\n    token = 'ghp_" + "A1b2C3d4E5" * 4 + "'\n    return 1\n"
    out, n = redact(text, "a.py")
    assert n == 1 and out.split("\n")[1] == "    " + REDACTED and out.split("\n")[2] == "    return 1"


def test_private_key_blocks_go_whole_and_only_them() -> None:
    body = ["MIIEowIBAAKCAQEA" + "q" * 48, "x9Y8w7V6u5T4s3R2" + "Q1p0" * 12]
    text = "\n".join(
        ['KEY = """-----BEGIN RSA PRIVATE KEY-----', *body, '-----END RSA PRIVATE KEY-----"""', "", "def after():"]
    )
    assert secret_lines(text, "k.py") == [0, 1, 2, 3]
    # A parser that only names the markers keeps its code.
    parser = (
        'START = b"-----BEGIN OPENSSH PRIVATE KEY-----"\n'
        "def load(data):\n    lines = data.splitlines()\n    return lines[1:-1]\n"
        'END = b"-----END OPENSSH PRIVATE KEY-----"\n'
    )
    assert secret_lines(parser, "ssh.py") == [0]
    # No END line (a truncated paste): the lines that look like key material still go.
    assert secret_lines("-----BEGIN PRIVATE KEY-----\n" + body[0] + "\nprint('done')\n", "a.md") == [0, 1]
    # PuTTY keys run to their MAC line.
    putty = ["PuTTY-User-Key-File-2: ssh-rsa", "Encryption: none", "Public-Lines: 1", body[0]]
    putty += ["Private-Lines: 1", body[1], "Private-MAC: " + "ab" * 20, "next = 1"]
    assert secret_lines("\n".join(putty), "notes.txt") == list(range(7))


def test_mostly_secret_files_are_judged_whole() -> None:
    key = (
        "-----BEGIN EC PRIVATE KEY-----\n"
        + "\n".join(["MHcCAQEEI" + "Ab3" * 18] * 3)
        + "\n-----END EC PRIVATE KEY-----\n"
    )
    assert scan(key, "notes/signing.txt").secret_content
    one_secret_among_many = "\n".join([f"option_{i} = {i}" for i in range(20)] + ["password = Tr0ub4dor&3xyz"])
    r = scan(one_secret_among_many, "app.ini")
    assert r.lines == 1 and not r.secret_content


def test_secret_file_names() -> None:
    for rel in ("config/secret.yaml", "k8s/app-secrets.yml", "kubeconfig", "ops/prod.kubeconfig", ".kube/config"):
        assert is_secret_file(rel), rel
    assert is_secret_file("home/me/.kube/config") and is_secret_file("deploy/kubeconfig.yaml")
    for rel in ("secrets.py", "pkg/kubeconfig.go", "config.yaml", "kube/config.py", "docs/secrets.md"):
        assert not is_secret_file(rel), rel


def test_hostile_lines_cost_little() -> None:
    # The keyword patterns backtrack on long candidate lines; such lines are not handed over.
    long_line = "password = '" + "a1B2" * 1_000 + "' " + "password=" * 100  # varied: no filler
    huge = "\n".join([long_line, "x = 1"] * 50) + "\n" + "secret_" * 5_000 + "\n"
    t0 = time.monotonic()
    hits = secret_lines(huge, "a.ini")
    assert time.monotonic() - t0 < 10
    assert 0 in hits and 1 not in hits and len(hits) == 51
    # Values built to make the checks' Python patterns backtrack (words joined by separators,
    # humps, dots) in every context a rule reads: each line is judged in linear time.
    values = ["A-" * 2_400 + "!", "a." * 2_400 + "!", "Ab" * 2_400 + "-!", "a1-" * 1_600 + " 1", "--" * 2_400 + "!"]
    shapes = ['password = "{}"', "mysql -u root -p{}", "curl -u user:{} https://x", "<password>{}</password>"]
    shapes += ['define("AUTH_KEY", "{}");', "Authorization: token {}", "host=db password={} dbname=x", "api_key = {}"]
    hostile = "\n".join(shape.format(v) for shape in shapes for v in values)
    t0 = time.monotonic()
    secret_lines(hostile, "a.yaml")
    assert time.monotonic() - t0 < 10
    # Lone surrogates (an editor buffer) neither crash nor hide a secret.
    assert redact("\ud800 token = 'ghp_" + "Z9y8X7w6V5" * 4 + "'\n", "a.py")[1] == 1


@pytest.mark.parametrize("path", ["a.py", "a.yaml", ""])
def test_unknown_text_is_judged_by_every_pattern(path: str) -> None:
    # The embedding guard has chunk text but no file: every assignment style counts.
    line = "DB_PASSWORD: Tr0ub4dor3xyz"
    assert (redact(line, path)[1] == 1) == (path != "a.py")
