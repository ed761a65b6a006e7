"""Does a value that a secret detector matched look like a secret, or like a placeholder, a
name, a template or a digest (ragls.ingest.secrets)?

The detectors (detect-secrets' and ragls's rules, `secret_gates.RAGLS_RULES`) find values by
their shape and where they are written; in docs, tests, templates and code most of what they
find stands for a secret (`ghp_XXXX...`, `${DB_PASSWORD}`, `changeme`, `settings.db_password`)
or is none (a host, a file, a hash). A redacted line is a line lost from the index, so each
finding meets one of these judges first (`secrets._CHECKS`, `secrets._line_hit`). They look at
the value alone, never at the line or the file; of detect-secrets they need only its heuristic
filters and entropy measures, passed in as `lib` (the `_Library` ingest/secrets.py builds)."""

from __future__ import annotations

import math
import re
from typing import Any, Protocol

from ragls.ingest.secret_gates import PROVIDER_NAMES


class _Library(Protocol):
    """What the judges read of `secrets._Library` (detect-secrets' plugins, imported lazily):
    a Protocol, so that this module does not import ingest/secrets.py, which imports it."""

    @property
    def heuristic(self) -> Any: ...  # detect_secrets.filters.heuristic

    @property
    def base64(self) -> Any: ...  # Base64HighEntropyString

    @property
    def hex(self) -> Any: ...  # HexHighEntropyString


QUOTES = "\"'`"
# Dotted or separated words, each optionally ending in digits: module paths, snake_case and
# kebab-case names, versions (`oauth2_client_credentials`, `pkg.mod.Class`, `v1.2.3`).
_IDENTIFIER = re.compile(r"[A-Za-z]*[0-9]*(?:[._/-][A-Za-z]*[0-9]*)+")
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_HEX = re.compile(r"[0-9a-fA-F]+")
# Names whose value is public or a digest, whatever it looks like.
NOT_CREDENTIAL_NAME = re.compile(r"(?i)public|sha\d*|md5|hash|digest|checksum|fingerprint|crc")
# Names that hold a credential for sure: a credential word, a key that says whose or what for
# (`X-Api-Key`, `ACCESS_KEY`, `consumer_key`), or a provider's name (`TWITTER_CONSUMER_KEY`,
# `ALGOLIA_ADMIN_KEY`). A name with only `key` in it (`cache_key`, `storage_key`) needs the
# library's own entropy limit (4.5, meant for any quoted string).
_STRONG_NAME = re.compile(
    r"(?i)token|secret|passw|pwd|credential|auth|bearer"
    r"|(?:api|app|access|consumer|license|licence|master|signing|encryption|admin|ingest|sdk|server|write)[-_.]?key"
    rf"|{PROVIDER_NAMES}"
)
# Random 16-character alphanumeric strings measure 3.03 at the least (4.0 at most), kubeadm
# tokens (`abcdef.0123456789abcdef`) 2.8: with a credential's name, 3.0 keeps nearly all.
_NAMED_BASE64_LIMIT = 3.0
_NAMED_HEX_LIMIT = 2.5
_DIGEST_LENGTHS = frozenset({32, 40, 64, 128})  # MD5, SHA-1, SHA-256, SHA-512 in hex
_PLACEHOLDER_WORDS = frozenset({"password", "passwd", "pass", "pwd", "secret", "token", "changeme", "example"})
# Words of values that stand for a password in docs, tests and templates (`your_password_here`,
# `changeit`, `test1234`, `P4ssword`'s relatives are real passwords and are not here).
_SLOT_WORDS = _PLACEHOLDER_WORDS | {
    "admin", "api", "auth", "bar", "baz", "change", "changeit", "db", "default", "demo", "dev", "dummy",
    "empty", "fake", "foo", "foobar", "guest", "here", "hidden", "insert", "key", "letmein", "local",
    "me", "my", "mypass", "mypassword", "none", "null", "passphrase", "placeholder", "pw", "qwerty",
    "redacted", "replace", "root", "sample", "secure", "some", "super", "supersecret", "test", "testing",
    "the", "this", "todo", "user", "username", "value", "your", "yourpassword",
}  # fmt: skip
# Templates inside a value: `${X}`, `{{ x }}`, `#{x}`, `%(x)s`, `@X@`, `__X__`. (A value that
# starts with `$`, `{` or `%s` is a slot already: `placeholder`. A `$` or `%` further in is part
# of many a password: `Summer2019$O2`.)
_TEMPLATE = re.compile(r"\$\{|\{\{|#\{|%\([A-Za-z_]+\)|@[A-Z_]{3,}@|__[A-Z_]+__")
# Words and numbers joined by separators: names, hosts, paths, versions, placeholders
# (`db.internal`, `vault:secret/data/db`, `orders-db-credentials-v2`, `sk-...`).
# A word (`credentials`, `Api`, `DB`, `v2`; not `hXYJJtCXV3`), written so that a string parses
# one way only: these run in Python's backtracking `re`, on values as long as a line.
_WORD = r"(?:[a-z]*|[A-Z](?:[a-z]+|[A-Z]*))[0-9]*"
JOINED_WORDS = re.compile(rf"{_WORD}(?:[._/:-]{_WORD})+")
_HOST = re.compile(r"(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
ANGLE_SLOT = re.compile(r"<[\w -]+>")  # `provider:<name>`, `user-<id>`: a slot inside a value
_FILE_NAME = re.compile(r"[\w./-]*\.[A-Za-z]{2,5}")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}")
# A name in code: snake_case, UPPER_CASE, or camelCase and PascalCase whose humps are words of
# two letters or more (`getPassword`, `DBPassword`; not `hXYJJtCXV3`), digits at the end.
_CODE_NAME = re.compile(
    r"[a-z_][a-z0-9_]*|[A-Z_][A-Z0-9_]*|(?:[A-Z]+[a-z]{2,}|[a-z]{2,})(?:[A-Z]+[a-z]{2,})*[A-Z]*[0-9]*"
)


def placeholder(value: str) -> bool:
    """`${PASSWORD}`, `{{ pw }}`, `<token>`, `%(pw)s`, `***`, `TOKEN`, `password`: a slot to fill
    in, not a secret."""
    v = value.strip("\"'`")
    low = v.lower()
    return (
        not v
        or v[0] in "${"
        or (v[0] == "<" and v[-1] == ">")
        or v.startswith(("%(", "%s"))
        or set(low) <= {"x", "*", "."}
        or (v.isalpha() and (v.isupper() or low in _PLACEHOLDER_WORDS))
        or _CONSTANT_NAME.fullmatch(v) is not None  # `ACCESS_TOKEN`, `YOUR_API_KEY`
        or (len(v) >= 8 and _dominant_share(v) > 0.5)  # `glc_1111...`, `0000...TUVWXYZ`
    )


_CONSTANT_NAME = re.compile(r"[A-Z]+(?:_[A-Z]+)+")


def _dominant_share(value: str) -> float:
    """The share of its most frequent character: a fill (`xxxx`, `1111`) rather than a value."""
    return max(value.count(c) for c in set(value)) / len(value)


def credential_like(value: str, lib: _Library, name: str = "") -> bool:
    """Does a value assigned to `name` look like a random credential rather than a word, a
    name or a digest?"""
    v = value.rstrip("=")
    if len(v) < 16 or v.isdigit() or not any(c.isdigit() for c in v) or not any(c.isalpha() for c in v):
        return False
    if NOT_CREDENTIAL_NAME.search(name) or _IDENTIFIER.fullmatch(v) or _code_reference(v):
        return False  # (`token: s.ZC9Ecf4M5g9o34Q6RkzGsj0z`, a Vault token, is no reference)
    if _HOST.fullmatch(v) or _FILE_NAME.fullmatch(v):
        return False  # a host, a file (`join(pwd, './data/pcg64dxsm-testset-1.csv')`)
    if lib.heuristic.is_sequential_string(v) or lib.heuristic.is_potential_uuid(v):
        return False
    strong = not name or bool(_STRONG_NAME.search(name))
    if _HEX.fullmatch(v):
        if not strong and len(v) in _DIGEST_LENGTHS:
            return False  # `cache_key = "<md5>"`, `key: <sha1>`: a digest under a name that says only `key`
        # random hex measures 3.0 or less (the library's limit) one time in six at 16 digits, one
        # in 200 at 24; under a credential's name 2.5 keeps them (16 digits: one in 700 below)
        return bool(lib.hex.calculate_shannon_entropy(v) > (_NAMED_HEX_LIMIT if strong else lib.hex.entropy_limit))
    limit = _NAMED_BASE64_LIMIT if strong else lib.base64.entropy_limit
    return bool(lib.base64.calculate_shannon_entropy(v) > limit)


def slot_words(value: str) -> bool:
    """`your_password_here`, `changeme123`, `test-test`: made of the words that stand for a
    password, with digits and punctuation around them."""
    words = [w for w in re.split(r"[^a-z]+", value.lower()) if w]
    return all(w in _SLOT_WORDS for w in words)


def _code_reference(value: str) -> bool:
    """`settings.db_password`, `cfg.Password`: an attribute in code (a random password with a
    dot in it is no chain of names)."""
    return bool(_DOTTED_NAME.fullmatch(value)) and all(_CODE_NAME.fullmatch(p) for p in value.split("."))


def password_like(value: str) -> bool:
    """A password written in a command line, a header, a connection string or config: six or
    more characters mixing letters with digits or symbols (or upper and lower case), not a slot
    to fill in, a template, a name, a host, a path or a URL."""
    v = value.strip(QUOTES)
    if not 6 <= len(v) <= 200 or any(c.isspace() for c in v) or v.isdigit() or v.isalpha():
        return False
    if placeholder(v) or _TEMPLATE.search(v) or slot_words(v) or "://" in v or ANGLE_SLOT.search(v):
        return False
    if v[0] in "/~\\" or v.startswith("./") or JOINED_WORDS.fullmatch(v) or _EMAIL.fullmatch(v):
        return False
    if _UUID.fullmatch(v.strip("{}")) or _FILE_NAME.fullmatch(v):
        return False  # `<UserSecretsId>...</UserSecretsId>`: an id; `k8s/app-secrets.yml`: a file
    if _code_reference(v):
        return False
    if len(v) < 8 and v.isalnum() and v.lower() == v:
        return False  # `latin1`, `sha256`, `base64`: a name; short passwords mix case or symbols
    runs = _ALNUM_RUN.findall(v)
    if not any(c.isalpha() for c in v) or (len(runs) == 1 and runs[0].isalpha()):
        return False  # `12:30:00`, `10.0.0.1`, `+49-30-1234`; `*EXPORT`, `(none)`: one word
    return not INDIRECT_VALUE.match(v)


def phrase_like(value: str) -> bool:
    """A generated key or salt (`define('AUTH_KEY', '...')`): long, varied, three or more kinds
    of character; spaces allowed, words alone are not enough."""
    v = value.strip()
    kinds = sum(
        (any(c.islower() for c in v), any(c.isupper() for c in v), any(c.isdigit() for c in v)),
        any(not c.isalnum() and not c.isspace() for c in v),
    )
    if placeholder(v) or _TEMPLATE.search(v) or slot_words(v):
        return False
    return len(v) >= 16 and len(set(v)) >= 12 and kinds >= 3


def token_like(value: str, lib: _Library, mixed: bool = False) -> bool:
    """The random part of a provider token (`varied`), with `mixed` letters and digits both."""
    if not varied(value, lib):
        return False
    return not mixed or (any(c.isdigit() for c in value) and any(c.isalpha() for c in value))


def varied(value: str, lib: _Library) -> bool:
    """Random enough for a token: its letters and digits are eight or more, six or more of them
    different, none over half of them, not a run (`abcdef`, `123456`), not a filler
    (`ghp_XXXX...`, `sk_test_xxxx...`, `glc_1111...`) and not words (`xoxb-your-bot-token`,
    `hf_requiredCharacteristicTypes...`)."""
    chars = "".join(_ALNUM_RUN.findall(value))
    if len(chars) < 8 or len(set(chars)) < 6 or _dominant_share(chars) > 0.5:
        return False
    if lib.heuristic.is_sequential_string(chars) or placeholder(value) or slot_words(value):
        return False
    if _entropy(chars) < min(3.0, math.log2(len(chars)) - 1.2):
        return False  # `sgp_5555555dAAAAA7777777CcccCF...`
    # Random letters are about half upper case; words in code are not (a 20-letter random run
    # falls outside a fifth to four fifths about once in 500).
    return not (chars.isalpha() and (len(chars) < 20 or not 0.2 <= _upper_share(chars) <= 0.8))


def _entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(text)
    return -sum(k / n * math.log2(k / n) for k in (text.count(c) for c in set(text)))


def _upper_share(word: str) -> float:
    return sum(c.isupper() for c in word) / len(word)


def basic_credentials(value: str) -> str | None:
    """The password of base64 `user:password` (a Basic header, a Docker config's `auth`)."""
    import base64
    import binascii

    try:
        text = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    _user, colon, password = text.partition(":")
    return password if colon and text.isprintable() else None


# The value is itself a call or a subscript (`password: get_password()`, `secret = env["X"]`):
# detect-secrets' `is_indirect_reference` tests the whole line instead, which would also pass
# `conn = connect(password="...")`.
INDIRECT_VALUE = re.compile(r"[\w.-]+[\[(]")


_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")


def url_password(value: str) -> bool:
    """A URL's password, not a slot (`user:password@`, `guest:guest@`, `${PW}`)."""
    return not (placeholder(value) or slot_words(value) or _TEMPLATE.search(value))
