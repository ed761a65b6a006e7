"""Secret-bearing files are never indexed; secret-looking lines are redacted in place."""

from __future__ import annotations

import re

from ragls.gitignore import PatternSet

# gitignore syntax, matched against the workspace-relative path.
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
    "*secrets*.y*ml",
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

# Tokens with well-known prefixes or shapes. A match redacts the whole line.
_SECRET_LINE = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r"|\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"
    r"|\bxox[abposr]-[A-Za-z0-9-]{10,}"
    r"|\bAIza[0-9A-Za-z_-]{35}\b"
    r"|\bglpat-[A-Za-z0-9_-]{20,}"
    r"|\bnpm_[A-Za-z0-9]{36}\b"
    r"|(?i:\b(?:password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\b\s*[:=]\s*['\"][^'\"\s]{8,}['\"])"
)
REDACTED = "[REDACTED: secret-looking line removed by ragls]"

# Every match of _SECRET_LINE contains one of these fragments: a token prefix as written, or
# a keyword of the case-insensitive branch once the text is case-folded. Looking for them is
# ~12x cheaper than the regex (which tries each branch at every offset: a third of the lexical
# pass's worker time, docs/performance.md), and most files hold none, so they skip the regex.
_TOKEN_MARKS = (
    "-----BEGIN ",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "AKIA",
    "ASIA",
    "sk-",
    "xox",
    "AIza",
    "glpat-",
    "npm_",
)
_KEYWORD_MARKS = (
    "passw",
    "secret",
    "api_key",
    "api-key",
    "apikey",
    "access_token",
    "access-token",
    "accesstoken",
    "auth_token",
    "auth-token",
    "authtoken",
)
# Characters the regex's case-insensitive branch equates with an ASCII letter but that do not
# case-fold to it: with one of them present, the regex decides.
_FOLD_EXCEPTIONS = ("\u0130", "\u0131")  # İ ı ~ i


def is_secret_file(rel_path: str) -> bool:
    return SECRET_FILES.matches(rel_path)


def may_hold_secret(text: str) -> bool:
    """False only when no line of `text` can match the secret-line pattern."""
    if any(m in text for m in _TOKEN_MARKS):
        return True
    if text.isascii():
        folded = text.lower()
    elif any(c in text for c in _FOLD_EXCEPTIONS):
        return True
    else:
        folded = text.casefold()  # ſ -> s and the Kelvin sign -> k, as the regex equates them
    return any(k in folded for k in _KEYWORD_MARKS)


def redact(text: str) -> tuple[str, int]:
    """Replace secret-looking lines, keeping line numbers stable. Returns (text, count)."""
    if not may_hold_secret(text):
        return text, 0
    lines = text.split("\n")
    n = 0
    for i, line in enumerate(lines):
        if may_hold_secret(line) and _SECRET_LINE.search(line):
            indent = line[: len(line) - len(line.lstrip())]
            lines[i] = indent + REDACTED
            n += 1
    return ("\n".join(lines), n) if n else (text, 0)
