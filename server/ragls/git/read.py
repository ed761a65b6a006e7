"""Reading a repository's commits with dulwich, as data, in a child process of its own.

The repository is untrusted, `.git` included: its control files decide what a reader opens
(`[include] path = /proc/self/fd/0` in `.git/config`, a `commondir` or `info/exclude` linked
there, a FIFO named `HEAD`). Read inside the server, such a file is the server's own LSP input:
requests vanish. So the server runs `python -m ragls.git.read` with no stdin (an include of
fd 0 reads nothing), its own stdout (whatever the reader opens there is not the server's), a
memory limit and a deadline (git_read._limit_self): a reader that blocks on a FIFO or loops
costs one killed child, never the server. No `git` process runs either, so `.git/config` cannot
name a program (pagers, gpg programs, fsmonitor hooks).

The child prints one JSON object: `{"head", "commits": [[message, [paths...]], ...], "watch"}`,
`watch` being the files whose change means HEAD may have moved (checked by the server with
`stat`, which never blocks).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

# A commit touching more files than this is a sweep (reformatting, a licence header, a rename
# of a package) whose message says nothing about any one file.
MAX_FILES_PER_COMMIT = 100
MAX_MESSAGE_CHARS = 2000
# A read of 1,000 commits takes a second or two; a child still reading after this is stuck (on a
# FIFO, on a pipe of its own that `/proc/self/fd/1` opened) and ends itself, even when the server
# that started it is gone.
READ_TIMEOUT_S = 120
# What the child may allocate: a walk of 100,000 commits of a large repository needs a few
# hundred MB; a repository that makes the reader allocate without end is stopped here.
CHILD_MEMORY_BYTES = 2 * 1024**3


@dataclass(frozen=True)
class Commit:
    message: str  # subject and first body paragraph, one line
    paths: tuple[str, ...]  # repository-relative, '/'-separated


def message_text(message: str) -> str:
    """A commit message's subject plus the first paragraph of its body, on one line; trailers
    (Signed-off-by, Co-authored-by) are not a description."""
    paragraphs = [p.strip() for p in message.strip().split("\n\n") if p.strip()]
    kept = paragraphs[:2]
    if len(kept) == 2 and all(":" in line.split(" ", 1)[0] for line in kept[1].splitlines()):
        kept = kept[:1]
    return " ".join(" ".join(kept).split())[:MAX_MESSAGE_CHARS]


def read_commits(repo_dir: Path, rev: str | None, max_commits: int) -> tuple[str, list[Commit], list[str]]:
    """(the commit walked from, the newest `max_commits` commits reachable from `rev` (HEAD when
    None) that have one parent, newest first, the files to watch for HEAD moving). `repo_dir` is
    a work tree or a bare repository. In-process only for repositories the user chose (the
    evaluation's mirrors); a workspace's goes through git_history.read_in_child."""
    from dulwich.repo import Repo

    repo = Repo(str(repo_dir))
    try:
        head = repo.head() if rev is None else repo[rev.encode("ascii")].id
        commits: list[Commit] = []
        for entry in repo.get_walker(include=[head], max_entries=max_commits):
            commit = entry.commit
            if len(commit.parents) != 1 or commit.parents[0] not in repo.object_store:
                # A merge restates its branch's commits; the root commit, and the oldest commit
                # of a shallow clone (its parent not fetched), would seem to add every file.
                continue
            paths: set[str] = set()
            for change in entry.changes():
                for side in (change.old, change.new):  # type: ignore[union-attr]
                    if side is not None and side.path:
                        paths.add(side.path.decode("utf-8", "replace"))
            if not paths or len(paths) > MAX_FILES_PER_COMMIT:
                continue
            text = message_text(commit.message.decode("utf-8", "replace"))
            if text:
                commits.append(Commit(text, tuple(sorted(paths))))
        return head.decode("ascii"), commits, _watch(repo)
    finally:
        repo.close()


def _watch(repo: object) -> list[str]:
    """HEAD (a checkout), the current branch's ref file and packed-refs (a commit, a fetch, a gc):
    each is replaced by a rename when it changes, so its inode and mtime say so."""
    control = repo.controldir()  # type: ignore[attr-defined]
    common = repo.commondir()  # type: ignore[attr-defined]
    out = [os.path.join(control, "HEAD"), os.path.join(common, "packed-refs"), os.path.join(common, "refs", "heads")]
    try:
        target = repo.refs.follow(b"HEAD")[0][-1]  # type: ignore[attr-defined]
        if target.startswith(b"refs/"):
            out.append(os.path.join(common, target.decode("utf-8", "replace")))
    except Exception:  # a detached HEAD or an odd ref: HEAD itself is watched
        pass
    return out


def _limit_self() -> None:
    """A memory limit, and a deadline that holds while blocked in a read (SIGALRM ends the
    process): the child never outlives a stuck read, whoever waits for it."""
    try:
        import resource
        import signal

        resource.setrlimit(resource.RLIMIT_DATA, (CHILD_MEMORY_BYTES, CHILD_MEMORY_BYTES))
        signal.alarm(READ_TIMEOUT_S)
    except (ImportError, AttributeError, ValueError, OSError):  # not on this platform
        pass


def main(argv: list[str]) -> int:
    """`python -m ragls.git.read REPO_DIR REV|'' MAX_COMMITS`: the JSON object on stdout, or
    exit status 1 with the reason on stderr."""
    _limit_self()
    repo_dir, rev, max_commits = Path(argv[0]), argv[1] or None, int(argv[2])
    try:
        head, commits, watch = read_commits(repo_dir, rev, max_commits)
    except Exception as exc:  # corrupt, unreadable, no commit yet: the server logs the reason
        print(f"{type(exc).__name__}: {exc}"[:500], file=sys.stderr)
        return 1
    payload = {"head": head, "commits": [[c.message, list(c.paths)] for c in commits], "watch": watch}
    json.dump(payload, sys.stdout, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
