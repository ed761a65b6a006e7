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


def is_secret_file(rel_path: str) -> bool:
    return SECRET_FILES.matches(rel_path)


def redact(text: str) -> tuple[str, int]:
    """Replace secret-looking lines, keeping line numbers stable. Returns (text, count)."""
    if not _SECRET_LINE.search(text):
        return text, 0
    lines = text.split("\n")
    n = 0
    for i, line in enumerate(lines):
        if _SECRET_LINE.search(line):
            indent = line[: len(line) - len(line.lstrip())]
            lines[i] = indent + REDACTED
            n += 1
    return "\n".join(lines), n
