"""Git history as retrieval evidence (ragls.git.history): per-file documents of commit messages
read from a real repository, ranked by BM25; bounded and safe on untrusted repositories; kept
current as HEAD moves; and, through `answer`, lifting the file an earlier change described."""

from __future__ import annotations

import contextlib
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragls.config import RetrievalSettings, Settings
from ragls.git import history as git_history
from ragls.git import read as git_read
from ragls.git.history import FileHistory, HistoryTracker, find_repository, load
from ragls.git.read import Commit, message_text
from ragls.index.worker import Indexer
from ragls.query.answer import answer
from ragls.query.file_boosts import co_change_lift, file_boost
from ragls.query.retrieval import CHANGE_TUNING, Hit
from tests.gitrepo import commit as _commit
from tests.gitrepo import git as _git
from tests.waiting import until


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    _git(r, "init", "-q", "-b", "main")
    _commit(
        r, {"pkg/parser.py": "def parse(s):\n    return s\n", "pkg/net.py": "def get(u):\n    return u\n"}, "Initial"
    )
    _commit(r, {"pkg/parser.py": "def parse(s):\n    return s or ''\n"}, "Fix parser crash on empty input")
    _commit(r, {"pkg/net.py": "def get(u, retries=3):\n    return u\n"}, "Retry network requests on timeout")
    return r


def test_files_rank_by_the_messages_of_the_commits_that_changed_them(repo: Path) -> None:
    history = load(repo, None, 1000)
    assert history.head == _git(repo, "rev-parse", "HEAD").strip()
    assert history.commits == 2  # the root commit adds everything and says nothing about a file
    assert history.rank("the parser crashes when the input is empty", 5) == ["pkg/parser.py"]
    assert history.rank("requests time out", 5) == ["pkg/net.py"]
    assert history.rank("unrelated words entirely", 5) == []
    # An older revision knows only its own past.
    first_fix = _git(repo, "rev-parse", "HEAD~1").strip()
    assert load(repo, first_fix, 1000).rank("requests time out", 5) == []
    # The newest commits only.
    assert load(repo, None, 1).rank("parser crash", 5) == []


def test_merges_and_sweeping_commits_say_nothing_about_a_file(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _git(repo, "checkout", "-q", "-b", "side")
    _commit(repo, {"pkg/net.py": "def get(u, retries=5):\n    return u\n"}, "Raise retries for flaky proxies")
    _git(repo, "checkout", "-q", "main")
    _commit(repo, {"pkg/parser.py": "def parse(s):\n    return (s or '').strip()\n"}, "Strip whitespace")
    _git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch side: zebra", "side")
    monkeypatch.setattr(git_read, "MAX_FILES_PER_COMMIT", 1)
    _commit(repo, {"pkg/parser.py": "# header\n", "pkg/net.py": "# header\n"}, "Add licence headers everywhere")
    history = load(repo, None, 1000)
    assert history.rank("zebra", 5) == []  # the merge's own message
    assert history.rank("flaky proxies", 5) == ["pkg/net.py"]  # the merged commit counts once
    assert history.rank("licence headers", 5) == []


def test_a_shallow_clone_reads_the_commits_it_has(repo: Path, tmp_path: Path) -> None:
    """The oldest commit of a shallow clone has no parent to compare with: it would seem to add
    every file, so it is skipped like a root commit."""
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "2", repo.as_uri(), str(shallow)], check=True, capture_output=True)
    history = load(shallow, None, 1000)
    assert history.commits == 1 and history.files == 1
    assert history.rank("requests time out", 5) == ["pkg/net.py"]
    assert history.rank("parser crash", 5) == []


def test_a_workspace_inside_a_repository_sees_its_own_paths(repo: Path) -> None:
    found = find_repository(repo / "pkg")
    assert found == (repo.resolve(), "pkg/")
    history = load(found[0], None, 1000, found[1])
    assert history.rank("parser crash", 5) == ["parser.py"]
    assert find_repository(repo) == (repo.resolve(), "")


def test_no_repository_means_no_history(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    tracker = HistoryTracker(ws, 1000) if find_repository(ws) is None else None
    if tracker is None:
        pytest.fail(f"{tmp_path} lies inside a git repository; the test needs a plain folder")
    assert not tracker.enabled and tracker.current() is None and tracker.rank("anything", 5) == []
    assert not HistoryTracker(ws, 0).enabled


def test_message_text_is_subject_and_first_paragraph_without_trailers() -> None:
    assert message_text("Fix it\n\nBecause.\nReally.\n\nMore.") == "Fix it Because. Really."
    assert message_text("Add Clone\n\nSigned-off-by: A <a@b>\n") == "Add Clone"
    assert len(message_text("x " * 5000)) == git_read.MAX_MESSAGE_CHARS


def test_reading_runs_nothing_the_repository_configures(repo: Path, tmp_path: Path) -> None:
    """The repository is untrusted: settings that make `git log` run programs (a gpg program for
    signatures, an fsmonitor hook, a pager) must not run anything when ragls reads history."""
    marker = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    for key, value in (
        ("log.showSignature", "true"),
        ("gpg.program", str(script)),
        ("core.fsmonitor", str(script)),
        ("core.pager", str(script)),
        ("diff.external", str(script)),
    ):
        _git(repo, "config", key, value)
    tracker = HistoryTracker(repo, 1000)
    history = tracker.build()
    assert history is not None and history.rank("parser crash", 5) == ["pkg/parser.py"]
    assert not marker.exists()


def test_a_corrupt_repository_leaves_history_off_without_failing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / ".git" / "config").write_text("[core]\n\trepositoryformatversion = 0\n")
    (ws / ".git" / "objects").mkdir()
    (ws / ".git" / "refs" / "heads").mkdir(parents=True)
    (ws / ".git" / "refs" / "heads" / "main").write_text("0" * 40 + "\n")  # names no object
    tracker = HistoryTracker(ws, 1000)
    assert tracker.enabled
    assert tracker.build() is None and tracker.error
    assert tracker.rank("anything", 5) == []


def test_the_tracker_builds_in_the_background_and_follows_head(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(git_history, "CHECK_INTERVAL_S", 0.0)
    tracker = HistoryTracker(repo, 1000)
    assert tracker.rank("scheduler", 5) == []  # the first query starts the build and does not wait
    until(lambda: tracker.history is not None, 30)
    _commit(repo, {"pkg/sched.py": "def run():\n    pass\n"}, "Add a cooperative scheduler")
    _commit(repo, {"pkg/sched.py": "def run():\n    return 1\n"}, "Scheduler: yield between tasks")
    until(lambda: tracker.rank("scheduler yields", 5) == ["pkg/sched.py"], 30)
    # The count is a retrieval setting: it applies to the next query.
    tracker.configure(0)
    assert not tracker.enabled and tracker.rank("scheduler yields", 5) == []
    tracker.configure(1)
    # A query notices and reads the history again, now only the newest commit.
    until(lambda: tracker.rank("scheduler yields", 5) == ["pkg/sched.py"], 30)
    assert tracker.history is not None and tracker.history.commits == 1
    assert tracker.rank("cooperative", 5) == []


def _hit(path: str, score: float) -> Hit:
    return Hit(path, 1, 2, None, "function", "python", score, "")


def test_the_boost_is_one_more_rrf_list_over_the_files_already_found() -> None:
    hits = [_hit("a.py", 0.40), _hit("b.py", 0.30), _hit("a.py", 0.20), _hit("c.py", 0.10)]
    out = file_boost(hits, ["c.py", "zz.py", "b.py"], weight=2.0, k=5)
    # c.py (history rank 0) gains 1 / (1/2 + 4), b.py (rank 2) 1 / (3/2 + 4); zz.py is not a
    # hit and a.py not in the history: b.py 0.48 passes a.py 0.40, c.py 0.32 passes a.py 0.20.
    assert [(h.path, round(h.score, 3)) for h in out] == [
        ("b.py", round(0.30 + 1 / 5.5, 3)),
        ("a.py", 0.40),
        ("c.py", round(0.10 + 1 / 4.5, 3)),
        ("a.py", 0.20),
    ]
    assert file_boost(hits, [], 2.0, 5) == hits


def test_co_changes_count_the_commits_that_changed_files_together(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _commit(repo, {"pkg/parser.py": "def parse(s):\n    return s.strip()\n", "pkg/lexer.py": "L = 1\n"}, "Lexer")
    _commit(repo, {"pkg/parser.py": "def parse(s):\n    return s\n", "pkg/lexer.py": "L = 2\n"}, "Lexer again")
    _commit(repo, {"pkg/parser.py": "# p\n", "pkg/net.py": "# n\n"}, "Both")
    monkeypatch.setattr(git_history, "CO_CHANGE_MAX_FILES", 2)
    _commit(repo, {"pkg/parser.py": "# q\n", "pkg/net.py": "# m\n", "pkg/lexer.py": "L = 3\n"}, "A sweep")
    history = load(repo, None, 1000)
    # The parser's commits: the fix alone, twice with the lexer, once with net; the sweep of
    # three files (over the cap of 2) and the root commit do not count.
    changed, together = history.co_changes("pkg/parser.py")
    assert (changed, dict(together)) == (4, {"pkg/lexer.py": 2, "pkg/net.py": 1})
    assert history.co_changes("pkg/nothing.py") == (0, {})
    # A workspace inside the repository sees its own paths.
    assert dict(load(repo, None, 1000, "pkg/").co_changes("lexer.py")[1]) == {"parser.py": 2}


def _history(*changes: tuple[str, ...]) -> FileHistory:
    return FileHistory("0" * 40, [Commit(f"change {i}", paths) for i, paths in enumerate(changes)])


def test_a_co_changed_file_moves_up_but_never_above_its_anchor() -> None:
    hits = [
        _hit("a.py", 0.9),
        _hit("x.py", 0.8),
        _hit("a.py", 0.7),
        _hit("y.py", 0.6),
        _hit("tests/test_a.py", 0.5),
        _hit("b.py", 0.4),
        _hit("b.py", 0.3),
    ]
    history = _history(("a.py", "b.py"), ("a.py", "b.py", "tests/test_a.py"), ("a.py", "z.py"), ("x.py",))
    out = co_change_lift(hits, history, anchors=2, weight=CHANGE_TUNING.co_change_weight)
    # b.py changed with a.py in 2 of its 3 commits: right below a.py, its chunks in their order;
    # the test file is not lifted, z.py (not a hit) does not join, x.py (changed once) lifts nothing.
    assert [(h.path, h.score) for h in out] == [
        ("a.py", 0.9),
        ("b.py", 0.4),
        ("x.py", 0.8),
        ("b.py", 0.3),
        ("a.py", 0.7),
        ("y.py", 0.6),
        ("tests/test_a.py", 0.5),
    ]
    assert list(dict.fromkeys(h.path for h in out)) == ["a.py", "b.py", "x.py", "y.py", "tests/test_a.py"]
    # With weight 0, no anchors or no history of the anchors, nothing moves.
    assert co_change_lift(hits, history, anchors=2, weight=0.0) == hits
    assert co_change_lift(hits, history, anchors=0, weight=0.5) == hits
    assert co_change_lift(hits, _history(("q.py", "b.py"), ("q.py", "b.py")), anchors=2, weight=0.5) == hits
    # A weak tie (1 of a.py's 30 commits) moves b.py only as far as its share earns: past one file.
    weak = _history(*([("a.py",)] * 29), ("a.py", "b.py"))
    moved = co_change_lift(hits, weak, anchors=1, weight=0.5)
    assert list(dict.fromkeys(h.path for h in moved)) == ["a.py", "x.py", "y.py", "b.py", "tests/test_a.py"]


SETTINGS_KTS = """fun unitTests(os: String): BuildType = BuildType {
    id("UnitTests_" + os)
    vcs { root(HttpsVcsRoot) }
    params { param("env.JDK", "17") }
}
"""
MATRIX_PY = '''def consolidate_matrix_rows(rows):
    """Consolidate the rows of a build matrix into one configuration per platform."""
    merged = {}
    for row in rows:
        merged.setdefault(row["platform"], []).append(row)
    return merged
'''


@contextlib.contextmanager
def _ready_index(ws: Path, tmp_path: Path) -> Iterator[Indexer]:
    """`ws` indexed with the real model, its git history read."""
    settings = Settings.model_validate({"cacheDir": str(tmp_path / "cache"), "indexing": {"watch": False}})
    idx = Indexer(ws, settings)
    idx.start()
    try:
        until(lambda: idx.snapshot().state == "ready", 120)
        idx.handle.git_history.build()
        yield idx
    finally:
        idx.stop()


def test_answer_lifts_the_file_an_earlier_change_described(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _git(ws, "init", "-q", "-b", "main")
    _commit(ws, {".teamcity/settings.kts": "fun unitTests(os: String) = null\n", "matrix.py": MATRIX_PY}, "Initial")
    _commit(ws, {".teamcity/settings.kts": SETTINGS_KTS}, "TeamCity: unit tests on Linux and Windows as one matrix")
    query = "consolidate the unit test matrix configuration in TeamCity"
    with _ready_index(ws, tmp_path) as idx:
        rs = idx.settings.retrieval

        def first(retrieval: RetrievalSettings, intent: str) -> str:
            return answer(idx.handle, retrieval, ws, query, 5, 4000, intent=intent).chunks[0].path

        # Asked as a change (rag/retrieve intent "change", MCP find_files): the history decides.
        assert first(rs, "change") == ".teamcity/settings.kts"
        # Asked as a question (the default), or with the history switched off: the code decides.
        assert first(rs, "question") == "matrix.py"
        assert first(rs.model_copy(update={"git_history_commits": 0}), "change") == "matrix.py"
        # On again: read again in the background (a query never waits for it).
        until(lambda: first(rs, "change") == ".teamcity/settings.kts", 30)


def test_a_bug_report_brings_the_file_changed_with_the_first_one_next(tmp_path: Path) -> None:
    """Through `answer`: a long change description (a bug report) finds the parser first; the
    loader, which its words do not describe but which past commits always changed with the
    parser, comes right after it once the history is on."""
    ws = tmp_path / "ws"
    ws.mkdir()
    _git(ws, "init", "-q", "-b", "main")
    files = {
        "parser.py": "def parse_section_header(line):\n    # an INI section header such as [server]\n"
        "    return line.strip()[1:-1]\n",
        "loader.py": "def merge_into(registry, entries):\n    for key, value in entries:\n        registry[key] = value\n",
        "writer.py": "def write_section(out, name):\n    # an INI section header\n    out.write(name)\n",
        "render.py": "def render_section_list(sections):\n    return ', '.join(sections)\n",
        "cli.py": "def main(argv):\n    # read the INI file named on the command line\n    return argv\n",
    }
    _commit(ws, files, "Initial")
    for n in range(3):  # messages that describe nothing: only the files changed together count
        _commit(ws, {"parser.py": files["parser.py"] + f"# {n}\n", "loader.py": files["loader.py"] + f"# {n}\n"}, "wip")
    _commit(ws, {"writer.py": files["writer.py"] + "# w\n"}, "wip")
    report = (
        "Parsing a section header fails\n\n"
        "When an INI file has a section header with spaces around the name, parse_section_header\n"
        "returns the name with the spaces, and the section is not found afterwards.\n"
        "Expected: [ server ] parses as the section header server.\n"
    )
    with _ready_index(ws, tmp_path) as idx:
        rs = idx.settings.retrieval

        def files_found(retrieval: RetrievalSettings) -> list[str]:
            res = answer(idx.handle, retrieval, ws, report, 10, 4000, intent="change")
            return list(dict.fromkeys(c.path for c in res.chunks))

        off = files_found(rs.model_copy(update={"git_history_commits": 0}))
        assert off[0] == "parser.py" and off.index("loader.py") > 1, off  # the code alone
        assert files_found(rs)[:2] == ["parser.py", "loader.py"]
