"""File history: the workspace's own git history as evidence of what each file is about.

Every file gets one document made of the messages (subject and first paragraph) of the recent
commits that changed it, and a query ranks files by BM25 over those documents
(`FileHistory.rank`). Retrieval lifts the chunks of the best-ranked files a little
(ragls.query.retrieval): a change described in words ("Consolidate test configurations in the
TeamCity settings") usually touches the files earlier changes in the same words touched.
Measured on the commit -> files task in docs/history/evaluation-log.md.

The repository is untrusted input: it is read with dulwich, as data only. No `git` process
runs, so nothing in the repository's configuration (pagers, gpg programs, fsmonitor hooks)
can choose what runs. The walk is bounded (`max_commits`, commits changing more than
`MAX_FILES_PER_COMMIT` files are skipped, messages are cut), and any failure to read leaves
the history off rather than failing indexing or a query.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ragls import lexical
from ragls.bm25 import BM25Index, Document

log = logging.getLogger(__name__)

# A commit touching more files than this is a sweep (reformatting, a licence header, a rename
# of a package) whose message says nothing about any one file.
MAX_FILES_PER_COMMIT = 100
MAX_MESSAGE_CHARS = 2000
# Co-changes count commits of at most this many files: in a larger one any two files are there
# together by chance (a rename, a dependency bump), not because one change needs both.
CO_CHANGE_MAX_FILES = 30
# How often a query may look whether HEAD moved (a commit, a checkout) before using the history.
CHECK_INTERVAL_S = 2.0


class FileRanker(Protocol):
    def rank(self, query: str, limit: int) -> list[str]: ...


class ChangeHistory(FileRanker, Protocol):
    def co_changes(self, path: str) -> tuple[int, Counter[str]]: ...


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


def find_repository(root: Path) -> tuple[Path, str] | None:
    """The git repository holding `root` (its own or an enclosing one) and `root`'s path inside
    it ('' or 'sub/dir/'), or None."""
    root = root.resolve()
    for candidate in (root, *root.parents):
        if (candidate / ".git").exists():
            rel = root.relative_to(candidate).as_posix()
            return candidate, "" if rel == "." else rel + "/"
    return None


def read_commits(repo_dir: Path, rev: str | None, max_commits: int) -> tuple[str, list[Commit]]:
    """(the commit walked from, the newest `max_commits` commits reachable from `rev` (HEAD when
    None) that have one parent, newest first). `repo_dir` is a work tree or a bare repository."""
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
        return head.decode("ascii"), commits
    finally:
        repo.close()


class FileHistory:
    """BM25 over one document per file: the messages of the commits that changed it."""

    def __init__(self, head: str, commits: list[Commit], prefix: str = "") -> None:
        self.head = head
        self.commits = len(commits)
        messages: dict[str, list[str]] = {}
        self._changed: list[tuple[str, ...]] = []  # each commit's workspace-relative paths
        self._commits_of: dict[str, list[int]] = {}  # path -> its commits (indexes into _changed)
        for commit in commits:
            paths = tuple(p[len(prefix) :] for p in commit.paths if p.startswith(prefix))
            for path in paths:
                messages.setdefault(path, []).append(commit.message)
            if paths and len(paths) <= CO_CHANGE_MAX_FILES:
                for path in paths:
                    self._commits_of.setdefault(path, []).append(len(self._changed))
                self._changed.append(paths)
        self._index = BM25Index(
            [Document(path, path, 1, 1, "\n".join(texts)) for path, texts in messages.items()],
            tokenizer=lexical.tokenize,
        )

    @property
    def files(self) -> int:
        return len(self._index)

    def rank(self, query: str, limit: int) -> list[str]:
        """Workspace-relative paths whose history matches `query`, best first."""
        return [d.path for d in self._index.search(query, limit)]

    def co_changes(self, path: str) -> tuple[int, Counter[str]]:
        """(how many commits of at most CO_CHANGE_MAX_FILES files changed `path`; how often each
        other file was in them)."""
        together: Counter[str] = Counter()
        mine = self._commits_of.get(path, [])
        for i in mine:
            together.update(p for p in self._changed[i] if p != path)
        return len(mine), together


def load(repo_dir: Path, rev: str | None, max_commits: int, prefix: str = "") -> FileHistory:
    head, commits = read_commits(repo_dir, rev, max_commits)
    return FileHistory(head, commits, prefix)


def _head_of(repo_dir: Path) -> str | None:
    from dulwich.repo import Repo

    repo = Repo(str(repo_dir))
    try:
        return repo.head().decode("ascii")
    finally:
        repo.close()


class HistoryTracker:
    """Keeps a workspace's FileHistory current: built in the background when the first query
    asks (so it never slows the first index pass), built again when HEAD moves (noticed by the
    next query, at most every CHECK_INTERVAL_S). A query never waits for a build: it uses the
    last history built, or none."""

    def __init__(self, root: Path, max_commits: int) -> None:
        self.max_commits = max_commits
        found = find_repository(root)
        self.repo_dir, self.prefix = found if found else (None, "")
        self.history: FileHistory | None = None
        self.error: str | None = None
        self._lock = threading.Lock()
        self._building = False
        self._checked = 0.0
        self._seen_head: str | None = None  # the HEAD the last build started from
        self._attempted = threading.Event()  # set once a first read ended (read or failed)

    @property
    def enabled(self) -> bool:
        return self.repo_dir is not None and self.max_commits > 0

    def configure(self, max_commits: int) -> None:
        """Retrieval settings apply to the next query: another count reads the history again."""
        if max_commits != self.max_commits:
            self.max_commits = max_commits
            self._seen_head, self._checked = None, 0.0
            if max_commits == 0:
                self.history = None

    def current(self) -> FileHistory | None:
        if not self.enabled:
            return None
        now = time.monotonic()
        if now - self._checked >= CHECK_INTERVAL_S:
            self._checked = now
            self._refresh_async()  # opening the repository takes milliseconds: not on the query's time
        return self.history

    def rank(self, query: str, limit: int) -> list[str]:
        history = self.current()
        return history.rank(query, limit) if history is not None else []

    def co_changes(self, path: str) -> tuple[int, Counter[str]]:
        history = self.current()
        return history.co_changes(path) if history is not None else (0, Counter())

    def wait_first(self, timeout: float) -> bool:
        """Start the first read if none ran yet and wait up to `timeout` s for it: a request that
        asked for the history (rag/retrieve intent "change") waits for it once, a question never."""
        if self.current() is not None or not self.enabled:
            return self.history is not None
        self._attempted.wait(timeout)
        return self.history is not None

    def _refresh_async(self) -> None:
        with self._lock:
            if self._building:
                return
            self._building = True
        threading.Thread(target=self._refresh, name="ragls-git-history", daemon=True).start()

    def build(self) -> FileHistory | None:
        """Read the history now, in the calling thread (tests, the CLI)."""
        with self._lock:
            self._building = True
        self._seen_head = None
        self._refresh()
        return self.history

    def _refresh(self) -> None:
        """Read the history again if HEAD moved since the last read (a commit, a checkout)."""
        try:
            if not self.enabled:
                return
            assert self.repo_dir is not None
            t0, max_commits = time.perf_counter(), self.max_commits
            try:
                head = _head_of(self.repo_dir)
                if head == self._seen_head:
                    return
                self._seen_head = head  # a failed read is not retried until HEAD moves
                history = load(self.repo_dir, head, max_commits, self.prefix)
            except Exception as exc:  # unreadable or corrupt repository, no commit yet: no history
                self.error = f"{type(exc).__name__}: {exc}"
                log.warning("git history not read from %s: %s", self.repo_dir, self.error)
                return
            if max_commits != self.max_commits:  # configure() changed it meanwhile: read again
                self._seen_head = None
                return
            self.history, self.error = history, None
            log.info(
                "git history: %d commits over %d files read in %.2f s",
                history.commits,
                history.files,
                time.perf_counter() - t0,
            )
        finally:
            with self._lock:
                self._building = False
            self._attempted.set()
