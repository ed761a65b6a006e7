"""The RE2 gates of the secret scan (ragls.secrets): for every detector, a linear-time pattern
that matches every line the detector could flag (a superset), so that one RE2 pass over a file
says whether any detector needs to look at it, and an RE2 set says which lines meet which.
tests/unit/test_secret_prefilter.py checks the gates against the detectors."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import re2

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
class Gate:
    detector: str  # "lib:<detect-secrets plugin class>" or "ragls:<rule in RAGLS_RULES>"
    precise: str  # matches every line the detector flags: found lines meet the detector
    quick: str = ""  # a cheaper superset of `precise` for the one pass over a file ("": the same)


# Every plugin of the library is a gate here or listed in LIBRARY_UNUSED: the test fails when
# an upgrade adds one.
LIBRARY_GATES = (
    Gate(
        "lib:ArtifactoryDetector",
        r"AKC[a-zA-Z0-9]{10}|AP[0-9A-F\x{80}-\x{10FFFF}][a-zA-Z0-9]{8}",
        r"AKC|AP[0-9A-F\x{80}-\x{10FFFF}]",
    ),
    Gate(
        "lib:AWSKeyDetector",
        r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"
        r"|(?i:aws.{0,20}(?:key|pwd|pw|pass|token).{0,20}['\"][0-9a-z/+]{40}['\"])",
        r"A3T|ABIA|ACCA|AKIA|ASIA|(?i:aws[^\n]*(?:key|pwd|pw|pass|token))",
    ),
    Gate("lib:AzureStorageKeyDetector", r"AccountKey=[a-zA-Z0-9+/=]{88}", "AccountKey="),
    Gate("lib:BasicAuthDetector", r"://[^/?#@\s]*:[^/?#@\s]*@"),
    Gate(
        "lib:CloudantDetector",
        r"(?i:(?:cloudant|cl|clou)[-_]?(?:api)?(?:key|pwd|pw|pass|token)|cloudant\.com)",
    ),
    Gate("lib:DiscordBotTokenDetector", rf"[MNO]{_W}{{23,25}}\.{_W}{{6}}\.{_W}{{27}}", rf"[MNO]{_W}{{23}}"),
    Gate("lib:GitHubTokenDetector", r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}", r"gh[pousr]_"),
    Gate("lib:GitLabTokenDetector", r"(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-|GR1348941"),
    Gate(
        "lib:IbmCloudIamDetector",
        r"(?i:(?:key|pwd|pass|token)['\"]?\]?[ =:>]+['\"]?[a-z0-9_-]{44})",
        r"(?i:(?:key|pwd|pass|token)['\"]?\]?[ =:>]+['\"]?[a-z0-9_-]{8})",
    ),
    Gate(
        "lib:IbmCosHmacDetector",
        r"(?i:secret[-_]?(?:access)?[-_]?key['\"]?\]?[ =:>]+['\"]?[a-f0-9]{48})",
        r"(?i:secret[-_]?(?:access)?[-_]?key)",
    ),
    Gate("lib:JwtTokenDetector", r"eyJ"),
    Gate("lib:KeywordDetector", "(?i:" + "|".join(KEYWORD_DENYLIST) + ")"),
    Gate("lib:MailchimpDetector", r"[0-9a-z]{32}-us[0-9]", r"-us[0-9]"),
    Gate("lib:NpmDetector", r"/:_authToken="),
    Gate("lib:OpenAIDetector", r"T3BlbkFJ"),
    Gate("lib:PrivateKeyDetector", _PRIVATE_KEY_BEGIN),
    Gate("lib:PypiTokenDetector", r"pypi-AgE"),
    Gate("lib:SendGridDetector", r"SG\.[a-zA-Z0-9_-]{22}\.[a-zA-Z0-9_-]{43}", r"SG\."),
    Gate("lib:SlackDetector", r"(?i:xox[abposr]-|hooks\.slack\.com/services/)"),
    Gate(
        "lib:SoftlayerDetector",
        r"(?i:(?:softlayer|sl)[-_]?(?:api)?(?:key|pwd|pass|token)|api.softlayer.com/soap/)",
    ),
    Gate("lib:SquareOAuthDetector", r"sq0csp-"),
    Gate("lib:StripeDetector", r"[rs]k_live_[0-9a-zA-Z]{24}", r"k_live_"),
    Gate("lib:TelegramBotTokenDetector", rf"{_D}{{8}}:[0-9A-Za-z_-]{{35}}", rf"{_D}{{8}}:"),
    Gate("lib:TwilioKeyDetector", r"AC[a-z0-9]{32}|SK[a-z0-9]{32}", r"(?:AC|SK)[a-z0-9]{8}"),
)
# Not used: a public IP address is not a secret (and fills docs and tests); the entropy
# plugins flag every random-looking quoted string, so ragls applies their entropy measures to
# credential-named assignments only (the `assignment` rule below).
LIBRARY_UNUSED = ("IPPublicDetector", "Base64HighEntropyString", "HexHighEntropyString")

# ragls rules: what the library misses. Each pattern is its own precise gate (RE2 both times,
# so they cannot disagree); rules in CHECKED_RULES also check their last group.
RAGLS_RULES: dict[str, tuple[str, str]] = {  # name -> (pattern, quick gate)
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
CHECKED_RULES = frozenset({"url_password", "url_query", "bearer", "assignment"})


def gates() -> list[Gate]:
    return [*LIBRARY_GATES, *(Gate(f"ragls:{n}", p, q) for n, (p, q) in RAGLS_RULES.items())]


# Python's `re` in IGNORECASE mode equates these with ASCII letters (İ ı ~ i); RE2 does not.
# They are mapped to `i` for the gates (same length, so offsets and lines stay).
_GATE_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i"})


def re2_options(max_mem_mb: int) -> Any:
    # RE2 caches the DFA states it has built, up to `max_mem` per expression, and when full
    # drops them and goes on. The cache only grows, by the variety of the text seen: with 32 MB
    # for each expression a process scanning files10k's 10,647 files kept 39 MB more than before,
    # 24 MB of it in the Set; with the sizes used below, 16 MB, the same redactions, the same CPU
    # time within noise (RssAnon, one process scanning every file; docs/history/performance-log.md,
    # "Tenth round"). Every lexical worker and the server keep their own.
    opts = re2.Options()
    opts.max_mem = max_mem_mb << 20
    return opts


@dataclass(frozen=True, slots=True)
class Compiled:
    quick: Any  # every quick gate, one RE2: is there anything at all?
    which: Any  # the same as an RE2 Set: which of them?
    precise: list[tuple[str, Any]]  # (detector, compiled precise gate), in gates() order


@functools.cache
def compiled() -> Compiled:
    every = gates()
    opts = re2_options(8)
    quick = [g.quick or g.precise for g in every]
    which = re2.Set.SearchSet(re2_options(4))
    for q in quick:
        which.Add(q)
    which.Compile()
    return Compiled(
        re2.compile("|".join(f"(?:{q})" for q in quick), opts),
        which,
        [(g.detector, re2.compile(g.precise, opts)) for g in every],
    )


def gate_bytes(text: str) -> bytes:
    if not text.isascii() and ("\u0130" in text or "\u0131" in text):
        text = text.translate(_GATE_FOLD)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates (a client's buffer): one character each still
        return re.sub("[\ud800-\udfff]", "\ufffd", text).encode("utf-8")


def candidates(text: str) -> dict[int, list[str]]:
    """Line index -> the detectors whose precise gate matches that line."""
    c = compiled()
    data = gate_bytes(text)  # bytes: RE2 offsets need no decoding
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
    return bool(candidates(text))
