"""Opening a file that a repository chose: the one way ragls reads a workspace's files.

Everything in a clone is untrusted, links included: `git clone` makes the links a repository
commits, so `.gitignore -> /proc/self/fd/0` would have the server read its own LSP input, a FIFO
named `src/.gitignore` would block the reader for good, and `-> /dev/zero` never ends. So a file
is opened without following a last-component link (`O_NOFOLLOW`), without blocking on a FIFO or
a device (`O_NONBLOCK`), and used only when `fstat` says it is a regular file; at most `limit`
bytes are read. A link is followed only when the caller names the folder it must resolve into
(`inside`): discovery lets a link inside the workspace stand for its target, ignore files do as
git does and never follow one. The user's own files (their git excludes, their ragls config)
pass `inside="/"`: links anywhere, still regular files only.
"""

from __future__ import annotations

import errno
import os
import stat

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FLAGS |= getattr(os, "O_NOCTTY", 0)  # a terminal device must never become the server's


class NotRegularFile(OSError):
    """A FIFO, socket, device or directory where a file was expected."""


class LinkRefused(OSError):
    """A link that the caller does not follow, or that leads out of its folder."""


def is_inside(real_root: str, target: str) -> bool:
    return real_root == os.sep or target == real_root or target.startswith(real_root + os.sep)


def open_regular(path: str | os.PathLike[str], inside: str | os.PathLike[str] | None = None) -> int:
    """A file descriptor on the regular file at `path` (the caller closes it). A link at `path`
    is refused (LinkRefused) unless `inside` is given and the link resolves into that folder.
    FileNotFoundError, PermissionError and the like pass through as OSError."""
    path = os.fspath(path)
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        if exc.errno != errno.ELOOP or not os.path.islink(path):
            raise
        if inside is None:
            raise LinkRefused(errno.ELOOP, "a link, not followed", path) from None
        target = os.path.realpath(path)
        if not is_inside(os.path.realpath(inside), target):
            raise LinkRefused(errno.EACCES, "a link leading out of its folder", path) from None
        fd = os.open(target, _FLAGS)  # a link again by now (a race): ELOOP, refused
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bounded(path: str | os.PathLike[str], limit: int, inside: str | os.PathLike[str] | None = None) -> bytes:
    """At most `limit` bytes of the regular file at `path` (see open_regular). Callers that need
    to know a file is larger than `max_bytes` ask for `max_bytes + 1`."""
    fd = open_regular(path, inside)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(limit)


def read_text_bounded(path: str | os.PathLike[str], limit: int, inside: str | os.PathLike[str] | None = None) -> str:
    """read_bounded decoded as UTF-8, undecodable bytes replaced."""
    return read_bounded(path, limit, inside).decode("utf-8", errors="replace")
