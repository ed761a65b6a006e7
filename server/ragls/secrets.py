"""Secrets stay out of the index (docs/security.md, "Secret detection").

Two layers:

- Files whose *name* says they hold secrets (`.env`, keys, credential stores, kubeconfigs) are
  never read: `is_secret_file`, checked by discovery before any read.
- Every other text is scanned before it is chunked, stored, returned or embedded (`scan`,
  `redact`): a line holding a secret is replaced in place by `REDACTED` (line numbers stay
  right), every line of a private-key block with it, and a file that is mostly secrets (a PEM
  key, a kubeconfig, a service-account key) is not indexed at all (`secret_content`).

The detection is detect-secrets 1.5.0 used as a library on strings: its per-provider detectors
(AWS, Azure, GitHub, GitLab, Slack, Stripe, Twilio, SendGrid, npm, PyPI, OpenAI, JWT, private
keys, basic-auth URLs, ...) and its keyword detector with the file-type-specific assignment
patterns, plus ragls rules for shapes it misses (`RAGLS_RULES`). Its entropy measures are
applied only to the value of a credential-named assignment: on every quoted string they flag
hashes and base64 test data all over ordinary code.

Speed: the library is a few dozen backtracking regexes per line, far too slow for every line of
a workspace. So each detector has a *gate*, a linear-time RE2 pattern that matches every line
the detector could flag (a superset: a provider prefix, a keyword, an assignment of a long
value). One RE2 pass over a file says whether any gate matches at all (for most files, none
does, and that is the whole cost); an RE2 set says which; only the lines those gates match meet
their detectors. tests/unit/test_secret_prefilter.py checks the gates against the detectors."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import re2

from ragls.gitignore import PatternSet
from ragls.languages import language_of
from ragls.secret_gates import CHECKED_RULES, LIBRARY_GATES, RAGLS_RULES, candidates, gate_bytes, re2_options

if TYPE_CHECKING:
    from re import Pattern

# gitignore syntax, matched against the workspace-relative path.
# Bump whenever the detection would redact or skip differently: an index made under older rules
# prepares every file again once (the indexer compares it with its manifest), so text that the
# older rules let through does not stay in the index until its file changes.
RULES_VERSION = "2"

SECRET_FILE_PATTERNS = [
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.crt",
    "*.cer",
    "*.der",
    "*.p8",
    "*.jks",
    "*.keystore",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*.ppk",
    ".npmrc",
    ".pypirc",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".htpasswd",
    ".pgpass",
    "credentials",
    "credentials.json",
    "credentials.*",
    "*secret*.json",
    "*secret*.y*ml",  # secret.yaml, secrets.yml, app-secret.yaml (Kubernetes Secret manifests)
    "*secret*.toml",
    "kubeconfig",
    "kubeconfig.y*ml",
    "*.kubeconfig",
    "**/.kube/config",
    "*.kdbx",
    "*.tfstate",
    "*.tfstate.*",
    "*.tfvars",
    ".docker/config.json",
    "service-account*.json",
    "*.gpg",
    "*.asc",
]
SECRET_FILES = PatternSet(SECRET_FILE_PATTERNS)

REDACTED = "[REDACTED: secret-looking line removed by ragls]"
# A file whose non-blank lines are at least this share secret is skipped whole: what would be
# left (a key's file name line, a comment) is not worth a chunk. Three quarters, not half: a
# short module holding a few credentials next to its code still gets its code indexed.
SECRET_CONTENT_SHARE = 0.75
SECRET_CONTENT = "secret_content"  # the skip reason
# Longer lines that a gate matches are redacted whole without meeting the library: its keyword
# patterns backtrack quadratically on long lines. Files with lines over 5,000 characters are
# skipped as minified before they get here (workspace._check_text).
_MAX_SCANNED_LINE = 5_000


def is_secret_file(rel_path: str) -> bool:
    return SECRET_FILES.matches(rel_path)


# -- detectors ---------------------------------------------------------------------------------
# ragls languages whose files assign unquoted literals (`KEY=value`, `key: value`), or quote
# config in prose, that detect-secrets has no file type for.
_CONFIG_LANGUAGES = frozenset(
    {"yaml", "toml", "ini", "shell", "dockerfile", "make", "text", "markdown", "rst", "asciidoc"}
)


@dataclass(frozen=True, slots=True)
class _Library:
    regex_plugins: dict[str, Any]  # class name -> instance
    keyword: Any
    base64: Any
    hex: Any
    keyword_sets: dict[str, dict[Pattern[str], int]]  # "config", "quoted", ..., "any"
    filetype_sets: dict[Any, dict[Pattern[str], int]]
    heuristic: Any  # detect_secrets.filters.heuristic
    determine_file_type: Callable[[str], Any]
    other: Any  # FileType.OTHER


@functools.cache
def _library() -> _Library:
    """detect-secrets' plugins, built once per process and only when a gate matched: importing
    it costs ~0.1 s (it imports requests), which a worker that sees no candidate never pays."""
    import warnings

    show = warnings.showwarning
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins import keyword as kw
    from detect_secrets.util.filetype import FileType, determine_file_type

    warnings.showwarning = show  # its logger setup routes every warning of the process to logging

    classes = {c.__name__: c for c in get_mapping_from_secret_type_to_class().values()}
    names = [g.detector.removeprefix("lib:") for g in LIBRARY_GATES]
    regex_plugins = {n: classes[n]() for n in names if n != "KeywordDetector"}
    everything: dict[Pattern[str], int] = {}
    for d in (*kw.REGEX_BY_FILETYPE.values(), kw.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP):
        everything.update(d)
    return _Library(
        regex_plugins=regex_plugins,
        keyword=classes["KeywordDetector"](),
        base64=classes["Base64HighEntropyString"](),
        hex=classes["HexHighEntropyString"](),
        keyword_sets={
            "config": kw.CONFIG_DENYLIST_REGEX_TO_GROUP,
            "quoted": kw.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
            "any": everything,
        },
        filetype_sets=dict(kw.REGEX_BY_FILETYPE),
        heuristic=heuristic,
        determine_file_type=determine_file_type,
        other=FileType.OTHER,
    )


@functools.lru_cache(maxsize=256)
def _keyword_set(path: str) -> dict[Pattern[str], int]:
    """The keyword detector's assignment patterns for a file: detect-secrets' per-file-type
    choice (quotes required in code, not in .ini/.yaml/.toml), config-style for the shell,
    Dockerfile, Makefile and prose files it does not know (`export DB_PASSWORD=...`), and every
    pattern when the file is unknown (the embedding guard sees chunk text only)."""
    lib = _library()
    if not path:
        return lib.keyword_sets["any"]
    ft = lib.determine_file_type(path)
    if ft != lib.other:
        return lib.filetype_sets.get(ft, lib.keyword_sets["quoted"])
    if language_of(path) in _CONFIG_LANGUAGES:
        return lib.keyword_sets["config"]
    return lib.keyword_sets["quoted"]


@functools.lru_cache(maxsize=256)
def _literal_values(path: str) -> bool:
    """Is an unquoted value in this file a literal (`token: abc` in YAML, `KEY=abc` in a shell
    script) rather than a name or an expression (`token = make_token()` in Python)? Unknown
    files (the embedding guard) count as config."""
    if not path or language_of(path) in _CONFIG_LANGUAGES:
        return True
    return _keyword_set(path) is _library().keyword_sets["config"]  # .ini .cfg .properties .toml


_QUOTES = "\"'`"
# Dotted or separated words, each optionally ending in digits: module paths, snake_case and
# kebab-case names, versions (`oauth2_client_credentials`, `pkg.mod.Class`, `v1.2.3`).
_IDENTIFIER = re.compile(r"[A-Za-z]*[0-9]*(?:[._/-][A-Za-z]*[0-9]*)+")
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_HEX = re.compile(r"[0-9a-fA-F]+")
# Names whose value is public or a digest, whatever it looks like.
_NOT_CREDENTIAL_NAME = re.compile(r"(?i)public|sha\d*|md5|hash|digest|checksum|fingerprint|crc")
# Names that hold a credential for sure; a name with only `key` in it (`cache_key`,
# `storage_key`) needs the library's own entropy limit (4.5, meant for any quoted string).
_STRONG_NAME = re.compile(r"(?i)token|secret|passw|pwd|credential|auth|bearer")
# Random 16-character alphanumeric strings measure 3.03 at the least (4.0 at most), kubeadm
# tokens (`abcdef.0123456789abcdef`) 2.8: with a credential's name, 3.0 keeps nearly all.
_NAMED_BASE64_LIMIT = 3.0
_PLACEHOLDER_WORDS = frozenset({"password", "passwd", "pass", "pwd", "secret", "token", "changeme", "example"})


def _placeholder(value: str) -> bool:
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
    )


def _credential_like(value: str, lib: _Library, name: str = "") -> bool:
    """Does a value assigned to `name` look like a random credential rather than a word, a
    name or a digest?"""
    v = value.rstrip("=")
    if len(v) < 16 or v.isdigit() or not any(c.isdigit() for c in v) or not any(c.isalpha() for c in v):
        return False
    if _NOT_CREDENTIAL_NAME.search(name) or _IDENTIFIER.fullmatch(v) or _DOTTED_NAME.fullmatch(v):
        return False
    if lib.heuristic.is_sequential_string(v) or lib.heuristic.is_potential_uuid(v):
        return False
    if _HEX.fullmatch(v):
        return bool(lib.hex.calculate_shannon_entropy(v) > lib.hex.entropy_limit)
    limit = _NAMED_BASE64_LIMIT if not name or _STRONG_NAME.search(name) else lib.base64.entropy_limit
    return bool(lib.base64.calculate_shannon_entropy(v) > limit)


# The value is itself a call or a subscript (`password: get_password()`, `secret = env["X"]`):
# detect-secrets' `is_indirect_reference` tests the whole line instead, which would also pass
# `conn = connect(password="...")`.
_INDIRECT_VALUE = re.compile(r"[\w.-]+[\[(]")


def _keyword_hit(line: str, path: str, lib: _Library) -> bool:
    """detect-secrets' keyword detector with its heuristic filters for keyword findings
    (templated, `$VAR`, ids, non-alphanumeric, sequential, indirect references)."""
    h = lib.heuristic
    for value in lib.keyword.analyze_string(line, denylist_regex_to_group=_keyword_set(path)):
        if not value or h.is_templated_secret(value) or h.is_prefixed_with_dollar_sign(value):
            continue
        if h.is_not_alphanumeric_string(value) or h.is_sequential_string(value) or _placeholder(value):
            continue
        if h.is_likely_id_string(value, line, lib.keyword) or _INDIRECT_VALUE.match(value):
            continue
        at = line.find(value)
        quoted = at > 0 and line[at - 1] in _QUOTES
        if not quoted and any(c.isspace() for c in value):
            continue  # unquoted words after `password:`: prose in a doc, not a value
        if not quoted and line[at + len(value) : at + len(value) + 1] in ("(", "["):
            continue  # `password = get_password()` in a config-style file
        return True
    return False


@functools.cache
def _ragls_rules() -> dict[str, Any]:
    opts = re2_options(8)
    return {n: re2.compile(p, opts) for n, (p, _) in RAGLS_RULES.items()}


def _ragls_hit(name: str, line: str, path: str, lib: _Library | None) -> bool:
    # On the gate's own input (İ ı folded): the rule is its own gate, so the two cannot differ.
    data = gate_bytes(line)
    rule = _ragls_rules()[name]
    if name not in CHECKED_RULES:
        return rule.search(data) is not None
    for m in rule.finditer(data):
        value = m.group(m.re.groups).decode("utf-8", "replace")
        if name in ("url_password", "url_query"):
            if not _placeholder(value):
                return True
        elif name == "bearer":
            if _credential_like(value, lib or _library(), "bearer"):
                return True
        elif m.group(2) is None and not _literal_values(path):
            continue  # `token = make_token`, `key: KeyType`: a name in code, not a literal
        elif _credential_like(value, lib or _library(), m.group(1).decode("utf-8", "replace")):
            return True
    return False


def _line_hit(line: str, path: str, gates: Iterable[str]) -> bool:
    if len(line) > _MAX_SCANNED_LINE:
        return True
    lib: _Library | None = None
    for gate in gates:
        kind, name = gate.split(":", 1)
        if kind == "ragls":
            if _ragls_hit(name, line, path, lib):
                return True
            continue
        lib = lib or _library()
        if name == "KeywordDetector":
            if _keyword_hit(line, path, lib):
                return True
        elif name == "BasicAuthDetector":
            if any(not _placeholder(v) for v in lib.regex_plugins[name].analyze_string(line)):
                return True  # `https://user:pass@host` in docs names a slot, not a password
        elif next(iter(lib.regex_plugins[name].analyze_string(line)), None) is not None:
            return True
    return False


# -- multi-line secrets ------------------------------------------------------------------------
_BLOCK_BEGIN = re.compile(r"(-{4,5}) ?BEGIN ([A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?) ?-{4,5}|PuTTY-User-Key-File-\d")
_KEY_HEADER = re.compile(
    r"\s*[\"'`]?\s*(?:Proc-Type|DEK-Info|Comment|Version|Hash|Encryption|Public-Lines|Private-Lines)\s*:"
)
_BODY_STRIP = " \t\"'`,;+()[]{}\\"


def _is_key_body(line: str) -> bool:
    s = line.strip(_BODY_STRIP)
    while s.endswith("\\n"):
        s = s[:-2].rstrip(_BODY_STRIP)
    s = s.rstrip("=")
    return len(s) >= 16 and all(c.isascii() and (c.isalnum() or c in "+/") for c in s)


def _key_block_end(lines: list[str], i: int) -> int:
    """The last line of the private-key block that starts on line i: its END line, or the
    last line that still looks like key material when there is none. i itself if the block
    is all on one line (a JSON string with \\n escapes) or line i only names the marker."""
    m = _BLOCK_BEGIN.search(lines[i])
    if m is None:
        return i
    if m.group(2):
        end_mark = "END " + m.group(2)
        if end_mark in lines[i][m.end() :]:
            return i
    else:
        end_mark = "Private-MAC:"
    last = i
    for j in range(i + 1, min(len(lines), i + 400)):
        line = lines[j]
        if end_mark in line:
            return j
        if _is_key_body(line) or _KEY_HEADER.match(line) or not line.strip():
            last = j if line.strip() else last
            continue
        break
    return last


_KUBECONFIG = re.compile(r"^kind:[ \t]*[\"']?Config\b", re.MULTILINE)
_SERVICE_ACCOUNT = re.compile(r"\"type\"\s*:\s*\"service_account\"")


@dataclass(frozen=True, slots=True)
class Redaction:
    text: str  # with every secret line replaced by REDACTED
    lines: int  # how many lines were replaced
    secret_content: bool  # mostly secrets: the file is not worth indexing at all


def secret_lines(text: str, path: str = "") -> list[int]:
    """Indexes of the lines of `text` that hold a secret, including whole private-key blocks.
    `path` picks the keyword detector's patterns for the file type ("" when unknown)."""
    gated = candidates(text)
    if not gated:
        return []
    lines = text.split("\n")
    found: list[int] = []
    covered = -1
    for i in sorted(gated):
        if i <= covered or not _line_hit(lines[i], path, gated[i]):
            continue
        end = _key_block_end(lines, i)
        found.extend(range(i, end + 1))
        covered = end
    return found


def scan(text: str, path: str = "") -> Redaction:
    """Redact `text` (a file's content, `path` workspace-relative) and judge whether it is
    mostly secrets."""
    hits = secret_lines(text, path)
    if not hits:
        return Redaction(text, 0, False)
    lines = text.split("\n")
    for i in hits:
        line = lines[i]
        lines[i] = line[: len(line) - len(line.lstrip())] + REDACTED
    nonblank = sum(1 for line in lines if line.strip())
    mostly = len(hits) >= SECRET_CONTENT_SHARE * nonblank or bool(
        _KUBECONFIG.search(text) or _SERVICE_ACCOUNT.search(text)
    )
    return Redaction("\n".join(lines), len(hits), mostly)


def redact(text: str, path: str = "") -> tuple[str, int]:
    """Replace secret lines, keeping line numbers stable. Returns (text, count)."""
    r = scan(text, path)
    return r.text, r.lines
