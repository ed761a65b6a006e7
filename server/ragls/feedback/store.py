"""The feedback files: one per workspace folder, private to the user, never in the workspace.

`$XDG_STATE_HOME/ragls/feedback/<workspace id>.jsonl` (default `~/.local/state/...`): state, not
cache (a cache may be deleted at any time; these are the user's own ratings), named like the
folder's index (`identity.workspace_id`: its name and a hash of its path). The folder is 0700 and
each file 0600 whatever the umask; a file holds one JSON record per line, at most `LIMIT`, the
oldest dropped first. A write rewrites the file (a rating is a click, the file a few MB at most)
under an exclusive lock beside it and replaces it in one rename, so two processes rating answers
on one folder (an editor and an agent) never lose a record or leave half a line.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from ragls.feedback.records import FeedbackRecord
from ragls.private import private_dirs, private_file
from ragls.system.identity import workspace_id

log = logging.getLogger(__name__)

LIMIT = 5000  # ratings kept per folder; the oldest go first
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class FeedbackStoreError(OSError):
    """The ratings cannot be stored or read (a message for the user)."""


def feedback_dir() -> Path:
    """Where every folder's ratings live: `$XDG_STATE_HOME/ragls/feedback`."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base).expanduser() / "ragls" / "feedback"


def file_for(root: Path) -> Path:
    return feedback_dir() / f"{workspace_id(root)}.jsonl"


def _private_folder(folder: Path) -> None:
    """The state folder made 0700, or closed up when an older one is readable by others."""
    private_dirs(folder)
    if os.name != "posix":
        return  # modes say nothing there (ACLs do); the profile folder is the user's
    st = folder.lstat()
    if not stat.S_ISDIR(st.st_mode):
        raise FeedbackStoreError(f"{folder} is not a folder")
    if stat.S_IMODE(st.st_mode) & 0o077:
        if st.st_uid != os.getuid():
            raise FeedbackStoreError(f"{folder} belongs to another user and is readable by others")
        os.chmod(folder, 0o700)


def tuned_file(root: Path) -> Path:
    """The folder's tuned ranker (`ragls feedback --tune`, feedback.tuning), beside its ratings."""
    return feedback_dir() / f"{workspace_id(root)}.ranker.json"


def _checked(root: Path, path: Path | None = None) -> Path:
    path = path or file_for(root)
    if path.resolve().is_relative_to(root.resolve()):
        # The folder would index (and could commit) its own ratings: $XDG_STATE_HOME in the
        # workspace, e.g. a home folder opened as one.
        raise FeedbackStoreError(f"the feedback folder {path.parent} is inside the workspace folder {root}")
    return path


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # Windows: one writer at a time is not enforced
        yield
        return
    lock = private_file(path.with_name(path.name + ".lock"))
    fd = os.open(lock, os.O_RDWR | _NOFOLLOW)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _read(path: Path) -> list[FeedbackRecord]:
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        return []
    with os.fdopen(fd, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    out: list[FeedbackRecord] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(FeedbackRecord.model_validate_json(line))
        except ValueError:  # a line by hand or by a future format: skipped, the rest still counts
            log.warning("%s:%d is not a rating; skipped", path, n)
    return out


def _write(path: Path, records: list[FeedbackRecord]) -> None:
    _write_text(
        path, "".join(json.dumps(r.model_dump(mode="json", by_alias=True), ensure_ascii=False) + "\n" for r in records)
    )


def _write_text(path: Path, text: str) -> None:
    """`text` as the whole of `path`, 0600, replaced in one rename (never half written)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def save(root: Path, record: FeedbackRecord, limit: int = LIMIT) -> Path:
    """Add a rating to the folder's file (replacing an earlier rating of the same answer), keeping
    the newest `limit`. Raises FeedbackStoreError."""
    path = _checked(root)
    try:
        _private_folder(path.parent)
        with _locked(path):
            records = [r for r in _read(path) if r.id != record.id]
            records.append(record)
            _write(path, records[-limit:])
    except FeedbackStoreError:
        raise
    except OSError as exc:
        raise FeedbackStoreError(f"cannot store the rating in {path}: {exc.strerror or exc}") from exc
    return path


def load(root: Path) -> list[FeedbackRecord]:
    """The folder's ratings, oldest first ([] when none)."""
    path = file_for(root)
    try:
        return _read(path)
    except OSError as exc:
        raise FeedbackStoreError(f"cannot read {path}: {exc.strerror or exc}") from exc


def clear(root: Path) -> bool:
    """Erase the folder's ratings; False when there were none."""
    path = file_for(root)
    with _locked(path) if path.parent.is_dir() else contextlib.nullcontext():
        try:
            path.unlink()
        except FileNotFoundError:
            return False
    with contextlib.suppress(OSError):
        path.with_name(path.name + ".lock").unlink()
    return True


def save_private(root: Path, path: Path, text: str) -> None:
    """Write a file of the folder's state (its tuned ranker: `tuned_file`) in the private feedback
    folder, as the ratings are. Raises FeedbackStoreError."""
    _checked(root, path)
    try:
        _private_folder(path.parent)
        _write_text(path, text)
    except FeedbackStoreError:
        raise
    except OSError as exc:
        raise FeedbackStoreError(f"cannot write {path}: {exc.strerror or exc}") from exc


def clear_tuned(root: Path) -> bool:
    """Erase the folder's tuned ranker; False when there was none."""
    try:
        tuned_file(root).unlink()
    except FileNotFoundError:
        return False
    return True
