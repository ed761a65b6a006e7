"""The name a workspace folder's index, manifest and collections go by (store/, private.py)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path


def workspace_id(root: Path) -> str:
    """Readable and unique: the folder name plus a hash of its absolute path."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", root.name)[:40] or "root"
    return f"{slug}-{hashlib.sha1(str(root.resolve()).encode()).hexdigest()[:12]}"
