"""One index per folder per machine: where a folder's owner lock and socket live, the lock, and
who may talk on the socket.

The first ragls process that takes a folder's lock (`flock`, released by the OS when the
holder dies, kill -9 included) owns the folder's index and serves every other local ragls
process over a unix socket beside the lock (sharing/owner_rpc.py: the index API on pygls's JSON-RPC,
docs/owner-socket.md). Both files live in a directory only the user can enter
(0700); the socket itself is 0600 and peers of another uid are refused (`trusted_peer`).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import socket
import stat
import struct
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ragls.config import Settings, cache_root
from ragls.private import private_dirs, secure_cache
from ragls.store import workspace_id

try:
    import fcntl
except ImportError:  # Windows: no flock and no unix sockets to share an index over
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

# sockaddr_un.sun_path, terminating NUL excluded: 108 bytes on Linux, 104 on macOS and the BSDs
_SUN_PATH_MAX = 107 if sys.platform.startswith("linux") else 103


@dataclass(frozen=True)
class Rendezvous:
    lock: Path
    socket: Path


def _private_dir(path: Path) -> Path:
    """Create (or check) a directory only this user can enter: 0700, ours, not a symlink."""
    private_dirs(path)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise PermissionError(f"{path} is not a directory owned by this user")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


# "/" + the socket's name in the short directory: 24 hex digits + ".sock".
_SOCK_NAME = 30
# The short folders' prefix, and what tempfile.mkdtemp adds to its base: "/" + it + 8 random
# characters.
_SHORT_PREFIX = "ragls-sock-"
_MKDTEMP_NAME = 1 + len(_SHORT_PREFIX) + 8
# An empty short folder untouched this long belongs to no running owner (binding or removing a
# socket touches it): pruned when a new one is made, so caches made and dropped (test runs) do
# not leave one empty folder each in /tmp for good.
_STALE_S = 24 * 3600


def _safe_base(base: Path) -> bool:
    """A folder where no other user can remove or replace what we create: ours and not
    writable by others, or root's and sticky (/tmp)."""
    try:
        st = os.stat(base)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or st.st_uid not in (0, os.getuid()):
        return False
    return not st.st_mode & 0o022 or bool(st.st_mode & stat.S_ISVTX)


def _usable_short(path: Path) -> bool:
    """Ours, a real directory (no link), 0700, in a safe folder, and short enough."""
    if not path.is_absolute() or len(os.fsencode(path)) + _SOCK_NAME > _SUN_PATH_MAX:
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    ours = stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077
    return ours and _safe_base(path.parent)


def _prune_short_dirs(base: Path) -> None:
    now = time.time()
    for d in base.glob(f"{_SHORT_PREFIX}*"):
        try:
            st = os.lstat(d)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and now - st.st_mtime > _STALE_S:
                d.rmdir()  # only when empty
        except OSError:
            continue


def _short_dir(run: Path) -> Path:
    """A short private folder for the owner sockets of a cache whose own path is too long.

    It is made by mkdtemp (an unpredictable name, created 0700 in one step, so no other user
    can make it first: a fixed `/tmp/ragls-<uid>` could be, which turned sharing off) and its
    path is recorded in `run/short-dir`, where every ragls process of this cache finds it, even
    one whose environment differs (XDG_RUNTIME_DIR is set in a desktop session, not over ssh).
    A record that names a folder gone (a reboot emptied /tmp) or not private is replaced."""
    assert fcntl is not None  # rendezvous() refused already
    record = run / "short-dir"
    fd = os.open(run / "short-dir.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # one process makes the folder; the others read it
        try:
            recorded: Path | None = Path(record.read_text(encoding="utf-8").strip())
        except (OSError, UnicodeDecodeError, ValueError):
            recorded = None
        if recorded is not None and _usable_short(recorded):
            return recorded
        bases = [os.environ.get("XDG_RUNTIME_DIR") or "", tempfile.gettempdir(), "/tmp"]
        for base in dict.fromkeys(Path(b) for b in bases if b):
            if len(os.fsencode(base)) + _MKDTEMP_NAME + _SOCK_NAME > _SUN_PATH_MAX or not _safe_base(base):
                continue
            _prune_short_dirs(base)
            try:
                made = Path(tempfile.mkdtemp(prefix=_SHORT_PREFIX, dir=base))
            except OSError:
                continue
            tmp = run / f"short-dir.{os.getpid()}.tmp"
            wfd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(wfd, "w", encoding="utf-8") as f:
                f.write(f"{made}\n")
            os.replace(tmp, record)
            if recorded is not None:
                log.info("owner sockets: %s is gone or not private; using %s", recorded, made)
            return made
        raise OSError("no private folder with a path short enough for the owner socket")
    finally:
        os.close(fd)  # closing drops the flock


def rendezvous(root: Path, settings: Settings) -> Rendezvous:
    """Where a folder's owner lock and socket live: `<cache>/run/<workspace-id>.{lock,sock}`.

    A socket path longer than sun_path allows (deep cache directories) moves to a short private
    folder recorded in the cache (`_short_dir`), under a hash of the workspace id. Raises
    OSError where processes cannot share (no flock or unix sockets)."""
    if fcntl is None or not hasattr(socket, "AF_UNIX"):
        raise OSError("sharing an index between processes needs flock and unix sockets")
    # Every face passes here before it opens an index: a cache left readable by others is
    # closed up (logged; the LSP and CLI faces did so already, keeping the warning for the status).
    secure_cache(settings, root)
    run = _private_dir(cache_root(settings) / "run")
    wsid = workspace_id(root)
    sock = run / f"{wsid}.sock"
    if len(os.fsencode(sock)) > _SUN_PATH_MAX:
        sock = _short_dir(run) / f"{hashlib.sha1(wsid.encode()).hexdigest()[:24]}.sock"
    return Rendezvous(run / f"{wsid}.lock", sock)


class OwnerLock:
    """An exclusive, non-blocking flock; the OS drops it when the process dies."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        if self._fd is not None:
            return True
        assert fcntl is not None  # rendezvous() refused already
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())  # for people reading the cache, not for ragls
        self._fd = fd
        return True

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def peer_uid(sock: socket.socket) -> int | None:
    """The peer's uid on Linux; None elsewhere, where the 0700 directory is the only guard."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def trusted_peer(sock: socket.socket) -> bool:
    """The other end of a unix socket is this user (or root); where the peer's uid cannot be
    known, the 0700 directory is the guard."""
    try:
        uid = peer_uid(sock)
    except OSError:
        return False
    return uid is None or uid in (os.getuid(), 0)
