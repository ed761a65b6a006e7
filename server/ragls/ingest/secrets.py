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
patterns, plus ragls rules for what it misses (`secret_gates.RAGLS_RULES`): the token shapes of
83 more providers, and credentials whose only sign is where they are written (command lines,
headers, connection strings, struct fields, XML config, `.netrc` lines). What a rule finds must
look like a secret, not a placeholder (`ghp_XXXX...`, `${DB_PASSWORD}`, `changeme`), a name or a
digest (`_CHECKS`). Its entropy measures are applied only to the value of a credential-named
assignment: on every quoted string they flag hashes and base64 test data all over ordinary code.
The judges of a value (placeholder, name, template or secret?) live in `secret_values`.

Speed: the library is a few dozen backtracking regexes per line, far too slow for every line of
a workspace. So each detector has a *gate*, a linear-time RE2 pattern that matches every line
the detector could flag (a superset: a provider prefix, a keyword, an assignment of a long
value). Two RE2 passes over a file say whether any gate matches at all (for most files, none
does, and that is the whole cost); an RE2 set says which; only the lines those gates match meet
their detectors. tests/unit/test_secret_prefilter.py checks the gates against the detectors,
tests/unit/test_secret_recall.py the whole scan against a labelled corpus (`make eval-secrets`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import re2

from ragls.ingest.gitignore import PatternSet
from ragls.ingest.secret_gates import LIBRARY_GATES, RAGLS_RULES, candidates, gate_bytes, re2_options
from ragls.ingest.secret_values import (
    ANGLE_SLOT,
    INDIRECT_VALUE,
    JOINED_WORDS,
    NOT_CREDENTIAL_NAME,
    QUOTES,
    basic_credentials,
    credential_like,
    password_like,
    phrase_like,
    placeholder,
    slot_words,
    token_like,
    url_password,
    varied,
)
from ragls.text.languages import language_of

if TYPE_CHECKING:
    from re import Pattern

# gitignore syntax, matched against the workspace-relative path.
# Bump whenever the detection would redact or skip differently: an index made under older rules
# prepares every file again once (the indexer compares it with its manifest), so text that the
# older rules let through does not stay in the index until its file changes.
RULES_VERSION = "3"  # 3: provider tokens and credentials in command lines, headers, XML (issue 51)

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


# A sentence in quotes (`"Use a passphrase of four random words"`): words, spaces, punctuation.
_SENTENCE = re.compile(r"[A-Za-z][A-Za-z',.!?-]*(?:\s+[A-Za-z',.!?-]+)+")


def _keyword_hit(line: str, path: str, lib: _Library) -> bool:
    """detect-secrets' keyword detector with its heuristic filters for keyword findings
    (templated, `$VAR`, ids, non-alphanumeric, sequential, indirect references)."""
    h = lib.heuristic
    for value in lib.keyword.analyze_string(line, denylist_regex_to_group=_keyword_set(path)):
        if not value or h.is_templated_secret(value) or h.is_prefixed_with_dollar_sign(value):
            continue
        if h.is_not_alphanumeric_string(value) or h.is_sequential_string(value) or placeholder(value):
            continue
        if h.is_likely_id_string(value, line, lib.keyword) or INDIRECT_VALUE.match(value):
            continue
        at = line.find(value)
        quoted = at > 0 and line[at - 1] in QUOTES
        if not quoted and any(c.isspace() for c in value):
            continue  # unquoted words after `password:`: prose in a doc, not a value
        if not quoted and line[at + len(value) : at + len(value) + 1] in ("(", "["):
            continue  # `password = get_password()` in a config-style file
        if JOINED_WORDS.fullmatch(value) or _SENTENCE.fullmatch(value) or slot_words(value):
            continue  # `secretName: orders-db-credentials-v2`, a label, `test-password`, `sk-...`
        if ANGLE_SLOT.search(value):
            continue  # `provider:<name>`
        return True
    return False


@functools.cache
def _ragls_rules() -> dict[str, Any]:
    opts = re2_options(8)
    return {n: re2.compile(r.pattern, opts) for n, r in RAGLS_RULES.items()}


def _value(m: Any) -> str:
    """The value a rule found: its last group that took part in the match (rules with
    alternatives put the value in a different group in each), or the whole match."""
    for k in range(m.re.groups, -1, -1):
        g = m.group(k)
        if g is not None:
            return str(g.decode("utf-8", "replace"))
    return ""


def _check_assignment(m: Any, label: str, path: str, lib: _Library) -> bool:
    if m.group(2) is None and not _literal_values(path):
        return False  # `token = make_token`, `key: KeyType`: a name in code, not a literal
    return credential_like(_value(m), lib, label)


def _check_authorization(m: Any, label: str, path: str, lib: _Library) -> bool:
    value = _value(m)
    if label.lower() == "basic":  # the label is the scheme
        password = basic_credentials(value)
        if password is not None:
            return password_like(password) or credential_like(password, lib, "password")
    return credential_like(value, lib, "token")


def _check_basic_auth(m: Any, label: str, path: str, lib: _Library) -> bool:
    value = _value(m)
    if m.group(2) is not None:  # a Docker config's `auth`: base64 of `user:password`
        password = basic_credentials(value)
        return password is not None and (password_like(password) or credential_like(password, lib, "password"))
    return password_like(value)


def _check_password(m: Any, label: str, path: str, lib: _Library) -> bool:
    if NOT_CREDENTIAL_NAME.search(label):
        return False  # `password_hash: "..."`, `secret_sha256: "..."`
    return password_like(_value(m))


def _check_named_uuid(m: Any, label: str, path: str, lib: _Library) -> bool:
    return bool(_CREDENTIAL_WORD.search(label)) and token_like(_value(m), lib)


_CREDENTIAL_WORD = re.compile(r"(?i)key|token|secret|passw|auth|api|credential")

# How each kind of rule judges what it found (secret_gates.Rule.check): the match, the name it
# is assigned to (the rule's first group, for rules that name one) or "", the file, the library.
_CHECKS: dict[str, Callable[[Any, str, str, _Library], bool]] = {
    "token": lambda m, label, path, lib: token_like(_value(m), lib),
    "token_mixed": lambda m, label, path, lib: token_like(_value(m), lib, mixed=True),
    "password": _check_password,
    "phrase": lambda m, label, path, lib: phrase_like(_value(m)),
    "url": lambda m, label, path, lib: url_password(_value(m)),
    "varied": lambda m, label, path, lib: varied(_value(m), lib),
    "bearer": lambda m, label, path, lib: credential_like(_value(m), lib, "bearer"),
    "assignment": _check_assignment,
    "authorization": _check_authorization,
    "basic_auth": _check_basic_auth,
    "named_uuid": _check_named_uuid,
}


def _ragls_hit(name: str, line: str, path: str, lib: _Library | None) -> bool:
    # On the gate's own input (İ ı folded): the rule is its own gate, so the two cannot differ.
    data = gate_bytes(line)
    rule = _ragls_rules()[name]
    spec = RAGLS_RULES[name]
    if not spec.check:
        return rule.search(data) is not None
    judge = _CHECKS[spec.check]
    for m in rule.finditer(data):
        label = m.group(1).decode("utf-8", "replace") if spec.named and m.group(1) is not None else ""
        if judge(m, label, path, lib or _library()):
            return True
    return False


# Plugins whose own check is the whole judgement: a private key's BEGIN line, a JWT that decodes.
_JUDGED_BY_THE_LIBRARY = frozenset({"PrivateKeyDetector", "JwtTokenDetector"})


def _plugin_matches(plugin: Any, line: str) -> Iterator[str]:
    """The whole text each of a regex plugin's patterns matches (`analyze_string` gives only
    their first group, which for some is the prefix alone: `ghp`)."""
    if next(iter(plugin.analyze_string(line)), None) is None:
        return
    for rx in plugin.denylist:
        for m in rx.finditer(line):
            yield m.group(0)


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
            if any(url_password(v) for v in lib.regex_plugins[name].analyze_string(line)):
                return True  # `https://user:pass@host` in docs names a slot, not a password
        elif name in _JUDGED_BY_THE_LIBRARY:
            if next(iter(lib.regex_plugins[name].analyze_string(line)), None) is not None:
                return True
        elif any(varied(v, lib) for v in _plugin_matches(lib.regex_plugins[name], line)):
            return True  # a provider's token, not its placeholder (`ghp_XXXX...`)
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
