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
patterns, plus ragls rules for shapes it misses (`_RAGLS_RULES`). Its entropy measures are
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


# -- gates -------------------------------------------------------------------------------------
# RE2 syntax. A gate may match more than its detector, never less: Python's `re` classes are
# Unicode-aware (`\d`, `\w` match non-ASCII digits and letters), so where a detector uses one,
# its gate uses these widened classes (any non-ASCII character) instead of RE2's ASCII ones.
# No gate matches across a newline.
_D = r"[0-9\x{80}-\x{10FFFF}]"
_W = r"[0-9A-Za-z_\x{80}-\x{10FFFF}-]"
# detect-secrets' keyword list (plugins/keyword.py DENYLIST; the test pins it to the library's).
KEYWORD_DENYLIST = (
    "api_?key",
    "auth_?key",
    "service_?key",
    "account_?key",
    "db_?key",
    "database_?key",
    "priv_?key",
    "private_?key",
    "client_?key",
    "db_?pass",
    "database_?pass",
    "key_?pass",
    "password",
    "passwd",
    "pwd",
    "secret",
    "contraseña",
    "contrasena",
)
# Names of a credential-holding assignment, for the ragls rule that catches what the keyword
# list misses (`*_TOKEN`, `client-key-data`, `api-key`, `*_KEY`...). Its value must also look
# random (`_credential_like`), so `token_type = "bearer"` and `key = module.attribute` pass.
_CREDENTIAL_NAMES = r"token|secret|passw|pwd|credential|auth|bearer|key"
_ASSIGNMENT_OP = r"[A-Za-z0-9_.-]*[\"'\]]{0,2}[ \t]*(?:=>|:=|==?|:)"
_CREDENTIAL_ASSIGNMENT = (
    rf"(?i:([A-Za-z0-9_.-]*(?:{_CREDENTIAL_NAMES}){_ASSIGNMENT_OP})[ \t]*"
    r"(\"|'|`|\[\"|\[')?([A-Za-z0-9+/=_.~-]{16,}))"
)
_PRIVATE_KEY_BEGIN = r"BEGIN [A-Z0-9 ]*PRIVATE KEY|PuTTY-User-Key-File-"


@dataclass(frozen=True, slots=True)
class _Gate:
    detector: str  # "lib:<detect-secrets plugin class>" or "ragls:<rule in _RAGLS_RULES>"
    precise: str  # matches every line the detector flags: found lines meet the detector
    quick: str = ""  # a cheaper superset of `precise` for the one pass over a file ("": the same)


# Every plugin of the library is a gate here or listed in _LIBRARY_UNUSED: the test fails when
# an upgrade adds one.
_LIBRARY_GATES = (
    _Gate(
        "lib:ArtifactoryDetector",
        r"AKC[a-zA-Z0-9]{10}|AP[0-9A-F\x{80}-\x{10FFFF}][a-zA-Z0-9]{8}",
        r"AKC|AP[0-9A-F\x{80}-\x{10FFFF}]",
    ),
    _Gate(
        "lib:AWSKeyDetector",
        r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"
        r"|(?i:aws.{0,20}(?:key|pwd|pw|pass|token).{0,20}['\"][0-9a-z/+]{40}['\"])",
        r"A3T|ABIA|ACCA|AKIA|ASIA|(?i:aws[^\n]*(?:key|pwd|pw|pass|token))",
    ),
    _Gate("lib:AzureStorageKeyDetector", r"AccountKey=[a-zA-Z0-9+/=]{88}", "AccountKey="),
    _Gate("lib:BasicAuthDetector", r"://[^/?#@\s]*:[^/?#@\s]*@"),
    _Gate(
        "lib:CloudantDetector",
        r"(?i:(?:cloudant|cl|clou)[-_]?(?:api)?(?:key|pwd|pw|pass|token)|cloudant\.com)",
    ),
    _Gate("lib:DiscordBotTokenDetector", rf"[MNO]{_W}{{23,25}}\.{_W}{{6}}\.{_W}{{27}}", rf"[MNO]{_W}{{23}}"),
    _Gate("lib:GitHubTokenDetector", r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}", r"gh[pousr]_"),
    _Gate("lib:GitLabTokenDetector", r"(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-|GR1348941"),
    _Gate(
        "lib:IbmCloudIamDetector",
        r"(?i:(?:key|pwd|pass|token)['\"]?\]?[ =:>]+['\"]?[a-z0-9_-]{44})",
        r"(?i:(?:key|pwd|pass|token)['\"]?\]?[ =:>]+['\"]?[a-z0-9_-]{8})",
    ),
    _Gate(
        "lib:IbmCosHmacDetector",
        r"(?i:secret[-_]?(?:access)?[-_]?key['\"]?\]?[ =:>]+['\"]?[a-f0-9]{48})",
        r"(?i:secret[-_]?(?:access)?[-_]?key)",
    ),
    _Gate("lib:JwtTokenDetector", r"eyJ"),
    _Gate("lib:KeywordDetector", "(?i:" + "|".join(KEYWORD_DENYLIST) + ")"),
    _Gate("lib:MailchimpDetector", r"[0-9a-z]{32}-us[0-9]", r"-us[0-9]"),
    _Gate("lib:NpmDetector", r"/:_authToken="),
    _Gate("lib:OpenAIDetector", r"T3BlbkFJ"),
    _Gate("lib:PrivateKeyDetector", _PRIVATE_KEY_BEGIN),
    _Gate("lib:PypiTokenDetector", r"pypi-AgE"),
    _Gate("lib:SendGridDetector", r"SG\.[a-zA-Z0-9_-]{22}\.[a-zA-Z0-9_-]{43}", r"SG\."),
    _Gate("lib:SlackDetector", r"(?i:xox[abposr]-|hooks\.slack\.com/services/)"),
    _Gate(
        "lib:SoftlayerDetector",
        r"(?i:(?:softlayer|sl)[-_]?(?:api)?(?:key|pwd|pass|token)|api.softlayer.com/soap/)",
    ),
    _Gate("lib:SquareOAuthDetector", r"sq0csp-"),
    _Gate("lib:StripeDetector", r"[rs]k_live_[0-9a-zA-Z]{24}", r"k_live_"),
    _Gate("lib:TelegramBotTokenDetector", rf"{_D}{{8}}:[0-9A-Za-z_-]{{35}}", rf"{_D}{{8}}:"),
    _Gate("lib:TwilioKeyDetector", r"AC[a-z0-9]{32}|SK[a-z0-9]{32}", r"(?:AC|SK)[a-z0-9]{8}"),
)
# Not used: a public IP address is not a secret (and fills docs and tests); the entropy
# plugins flag every random-looking quoted string, so ragls applies their entropy measures to
# credential-named assignments only (the `assignment` rule below).
_LIBRARY_UNUSED = ("IPPublicDetector", "Base64HighEntropyString", "HexHighEntropyString")

# ragls rules: what the library misses. Each pattern is its own precise gate (RE2 both times,
# so they cannot disagree); rules in _CHECKED_RULES also check their last group.
_RAGLS_RULES: dict[str, tuple[str, str]] = {  # name -> (pattern, quick gate)
    # fine-grained GitHub tokens (the library knows only ghp_/gho_/ghu_/ghs_/ghr_)
    "github_pat": (r"github_pat_[A-Za-z0-9_]{22,}", "github_pat_"),
    # OpenAI (project, service-account, admin) and Anthropic keys: the library's OpenAI rule
    # needs the legacy `T3BlbkFJ` marker
    "ai_api_key": (r"\bsk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", r"\bsk-"),
    # Google API keys, OAuth client secrets and access tokens
    "google": (
        r"AIza[0-9A-Za-z_-]{35}|GOCSPX-[A-Za-z0-9_-]{20,}|\bya29\.[0-9A-Za-z_-]{20,}",
        r"AIza|GOCSPX-|\bya29\.",
    ),
    # npm tokens outside an .npmrc line
    "npm_token": (r"\bnpm_[A-Za-z0-9]{36}\b", r"\bnpm_"),
    # Stripe test and restricted keys, webhook signing secrets
    "stripe_more": (r"\b[rs]k_test_[0-9a-zA-Z]{24,}|\bwhsec_[A-Za-z0-9+/]{24,}", r"k_test_|whsec_"),
    # Slack app-level, refresh and config tokens (the library needs digit groups after xox?-)
    "slack_more": (
        r"(?i:\bxox[a-z]-[A-Za-z0-9-]{10,}|\bxapp-[0-9]-[A-Za-z0-9-]{10,}|\bxoxe\.xox[a-z]-)",
        r"(?i:xox[a-z][-.]|xapp-)",
    ),
    # a password in a URL whose user is empty (`redis://:pw@host`); the library needs a user
    "url_password": (r"://:([^/?#@\s]+)@", "://:"),
    # credentials in a query string: `jdbc:...?user=app&password=...`, `?access_token=...`
    "url_query": (
        r"(?i:[?&;](?:password|passwd|pwd|pass|secret|token|api[-_]?key|apikey|access[-_]?token"
        r"|auth|client[-_]?secret|sig)=([A-Za-z0-9%+/=_.~-]{6,}))",
        r"(?i:[?&;](?:pass|pwd|secret|token|api|access|auth|client|sig)[a-z_-]*=)",
    ),
    # an Authorization header's bearer token
    "bearer": (r"(?i:\bbearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*))", r"(?i:bearer[ \t])"),
    # a credential-named assignment with a random-looking value, quoted or not
    "assignment": (
        _CREDENTIAL_ASSIGNMENT,
        rf"(?i:(?:{_CREDENTIAL_NAMES}){_ASSIGNMENT_OP})",
    ),
    # the first line of a private key (its body is handled as a block: `_key_block_end`)
    "private_key": (_PRIVATE_KEY_BEGIN, ""),
}
# Rules whose last group must look like a credential, not a word or a placeholder.
_CHECKED_RULES = frozenset({"url_password", "url_query", "bearer", "assignment"})


def _gates() -> list[_Gate]:
    return [*_LIBRARY_GATES, *(_Gate(f"ragls:{n}", p, q) for n, (p, q) in _RAGLS_RULES.items())]


# Python's `re` in IGNORECASE mode equates these with ASCII letters (İ ı ~ i); RE2 does not.
# They are mapped to `i` for the gates (same length, so offsets and lines stay).
_GATE_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i"})


def _re2_options() -> Any:
    opts = re2.Options()
    opts.max_mem = 32 << 20  # the union of ~35 quick gates: room for its DFA's states
    return opts


@dataclass(frozen=True, slots=True)
class _Compiled:
    quick: Any  # every quick gate, one RE2: is there anything at all?
    which: Any  # the same as an RE2 Set: which of them?
    precise: list[tuple[str, Any]]  # (detector, compiled precise gate), in _gates() order


@functools.cache
def _compiled() -> _Compiled:
    gates = _gates()
    opts = _re2_options()
    quick = [g.quick or g.precise for g in gates]
    which = re2.Set.SearchSet(opts)
    for q in quick:
        which.Add(q)
    which.Compile()
    return _Compiled(
        re2.compile("|".join(f"(?:{q})" for q in quick), opts),
        which,
        [(g.detector, re2.compile(g.precise, opts)) for g in gates],
    )


def _gate_bytes(text: str) -> bytes:
    if not text.isascii() and ("\u0130" in text or "\u0131" in text):
        text = text.translate(_GATE_FOLD)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates (a client's buffer): one character each still
        return re.sub("[\ud800-\udfff]", "\ufffd", text).encode("utf-8")


def _candidates(text: str) -> dict[int, list[str]]:
    """Line index -> the detectors whose precise gate matches that line."""
    c = _compiled()
    data = _gate_bytes(text)  # bytes: RE2 offsets need no decoding
    if c.quick.search(data) is None:  # most files: one linear pass, no line ever split
        return {}
    # The Set answers from a DFA only, which gives up (answering nothing) if it runs out of
    # memory; the regex above falls back to an NFA instead. So nothing means: ask every gate.
    hit = c.which.Match(data) or range(len(c.precise))
    out: dict[int, list[str]] = {}
    for k in sorted(hit):
        detector, rx = c.precise[k]
        pos, line = 0, 0
        while (m := rx.search(data, pos)) is not None:
            start = m.start()
            line += data.count(b"\n", pos, start)
            out.setdefault(line, []).append(detector)
            nl = data.find(b"\n", start)
            if nl < 0:
                break
            pos, line = nl + 1, line + 1  # gates never cross a newline: on to the next line
    return out


def may_hold_secret(text: str) -> bool:
    """False only when no detector can flag any line of `text`."""
    return bool(_candidates(text))


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
    names = [g.detector.removeprefix("lib:") for g in _LIBRARY_GATES]
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
    opts = _re2_options()
    return {n: re2.compile(p, opts) for n, (p, _) in _RAGLS_RULES.items()}


def _ragls_hit(name: str, line: str, path: str, lib: _Library | None) -> bool:
    # On the gate's own input (İ ı folded): the rule is its own gate, so the two cannot differ.
    data = _gate_bytes(line)
    rule = _ragls_rules()[name]
    if name not in _CHECKED_RULES:
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
    candidates = _candidates(text)
    if not candidates:
        return []
    lines = text.split("\n")
    found: list[int] = []
    covered = -1
    for i in sorted(candidates):
        if i <= covered or not _line_hit(lines[i], path, candidates[i]):
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
