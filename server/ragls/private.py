"""The cache is private: folders 0700, files 0600 (issue 37).

The index holds the code's text in Qdrant payloads and SQLite pages, so another local user
must not be able to read it. Three layers, each enough for what it covers:

- `restrict_umask()` at every entry point (frontends/cli/main.py): everything the process creates, including
  the files Qdrant Edge's Rust code and SQLite's journals make, is born 0600/0700. A umask is
  process-wide and inherited by the worker processes, so one call covers every thread.
- `private_dirs()` where the cache's folders are made: 0700 whatever the umask, since the
  library is also used without the entry points (tests, `import ragls`).
- `secure_cache()` at start: a cache made by an older ragls (0755 folders, 0644 files) or by
  hand is closed up, with a warning the status shows.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

# Settings (pydantic) load on first use: the language server sets its umask before answering
# `initialize`, which must not wait for them.
if TYPE_CHECKING:
    from ragls.config import Settings

log = logging.getLogger(__name__)

PRIVATE_UMASK = 0o077


def restrict_umask() -> None:
    """Nothing this process creates is readable by other users (group and others masked)."""
    os.umask(os.umask(PRIVATE_UMASK) | PRIVATE_UMASK)


def private_dirs(path: Path) -> Path:
    """`mkdir -p` with every folder it creates 0700 (Path.mkdir gives parents the umask's
    mode); folders that exist are left as they are (secure_cache checks the cache's own)."""
    missing: list[Path] = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:  # made by another process meanwhile
            continue
        os.chmod(d, 0o700)  # mkdir's mode is masked by the umask; never loosened by it, though
    return path


def private_file(path: Path) -> Path:
    """Create `path` empty and 0600 if it is missing, before a library opens it with its own
    mode (SQLite: 0644 less the umask; its -wal and -shm files copy the database's mode)."""
    private_dirs(path.parent)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600))
    except OSError:
        pass  # there already, or cannot be made (a read-only or full disk): the library reports it
    return path


def _tighten(path: Path, private_mode: int, fixed: list[str]) -> None:
    try:
        st = os.stat(path)
    except OSError:
        return  # not there (yet): created private
    mode = stat.S_IMODE(st.st_mode)
    if not mode & 0o077:
        return
    if st.st_uid != os.getuid():
        # Not ours to change (a cache shared on purpose, or set up by root): say so.
        fixed.append(f"{path} belongs to another user and is readable by others (mode {mode:04o})")
        return
    try:
        os.chmod(path, mode & private_mode)
    except OSError as exc:
        fixed.append(f"{path} is readable by other users (mode {mode:04o}) and could not be made private: {exc}")
        return
    fixed.append(f"{path} was readable by other users (mode {mode:04o}); made private ({mode & private_mode:04o})")


def secure_cache(settings: Settings, root: Path | None = None) -> list[str]:
    """Close up the cache root, its index and run folders, the shared embedding cache and (for
    `root`) the folder's index directory when other users could read them; one warning per
    path fixed. Deeper files need no walk: nobody else can get past a 0700 folder."""
    if os.name != "posix":
        return []  # Windows: modes do not say who may read (ACLs do); the profile is the user's
    from ragls.config import cache_root

    base = cache_root(settings)
    dirs = [base, base / "index", base / "run"]
    if settings.qdrant.path:
        dirs.append(Path(settings.qdrant.path).expanduser())
    if root is not None:
        from ragls.system.identity import workspace_id

        index_base = Path(settings.qdrant.path).expanduser() if settings.qdrant.path else base / "index"
        dirs.append(index_base / workspace_id(root))
    fixed: list[str] = []
    for d in dict.fromkeys(dirs):
        if d.is_dir():
            _tighten(d, 0o700, fixed)
    for name in ("embeddings.sqlite", "embeddings.sqlite-wal", "embeddings.sqlite-shm"):
        _tighten(base / name, 0o600, fixed)
    for line in fixed:
        log.warning("cache permissions: %s", line)
    return [f"cache permissions: {line}" for line in fixed]
