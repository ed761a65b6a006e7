"""Opening a file a repository chose (ragls.system.untrusted_files), on real links, FIFOs and devices:
never a block, never a link out of its folder, never more than the bound."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from ragls.config import Settings, resolve_settings
from ragls.ingest.discovery import IgnoreRules, read_source
from ragls.system.untrusted_files import LinkRefused, NotRegularFile, read_bounded


def _in_thread(fn, timeout: float = 10.0):  # type: ignore[no-untyped-def]
    """Run `fn` where a block cannot hang the test: the call must end within `timeout`."""
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(_outcome(fn)), daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "the read blocked"
    return out[0]


def _outcome(fn):  # type: ignore[no-untyped-def]
    try:
        return fn()
    except Exception as exc:
        return exc


def test_regular_files_are_read_up_to_the_bound(tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    p.write_bytes(b"x" * 100)
    assert read_bounded(p, 10) == b"x" * 10
    assert read_bounded(p, 1000) == b"x" * 100


def test_fifos_devices_and_directories_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in (fifo, Path("/dev/zero"), tmp_path):
        assert isinstance(_in_thread(lambda t=target: read_bounded(t, 100)), NotRegularFile)
    # Through a link inside the folder too: what it points at decides.
    os.symlink(fifo, tmp_path / "to-fifo")
    assert isinstance(_in_thread(lambda: read_bounded(tmp_path / "to-fifo", 100, tmp_path)), NotRegularFile)


def test_links_are_followed_only_into_the_folder_named(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "real.py").write_text("x = 1\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    os.symlink("real.py", root / "inside.py")
    os.symlink("../outside.txt", root / "out.py")
    os.symlink("/proc/self/fd/0", root / "stdin.py")
    assert isinstance(_outcome(lambda: read_bounded(root / "inside.py", 100)), LinkRefused)  # no folder: no link
    assert read_bounded(root / "inside.py", 100, root) == b"x = 1\n"
    assert isinstance(_outcome(lambda: read_bounded(root / "out.py", 100, root)), LinkRefused)
    assert isinstance(_in_thread(lambda: read_bounded(root / "stdin.py", 100, root)), LinkRefused)
    assert read_bounded(root / "out.py", 100, "/") == b"secret\n"  # the user's own files: anywhere


def test_a_source_replaced_by_a_fifo_or_an_outside_link_after_discovery_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def a(): pass\n")
    (tmp_path / "b.py").write_text("def b(): pass\n")
    (tmp_path / "c.py").write_text("def c(): pass\n")
    (tmp_path / "real.py").write_text("def real(): pass\n")
    os.symlink("real.py", tmp_path / "d.py")
    (tmp_path / "a.py").unlink()
    os.mkfifo(tmp_path / "a.py")
    (tmp_path / "b.py").unlink()
    os.symlink("/proc/self/fd/0", tmp_path / "b.py")
    assert _in_thread(lambda: read_source(tmp_path / "a.py", 1000, tmp_path).skip) == "unreadable"
    assert _in_thread(lambda: read_source(tmp_path / "b.py", 1000, tmp_path).skip) == "unreadable"
    assert read_source(tmp_path / "c.py", 5, tmp_path).skip == "too_large"
    assert read_source(tmp_path / "d.py", 1000, tmp_path).text == "def real(): pass\n"


def test_ignore_and_settings_files_that_are_links_or_fifos_set_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    (tmp_path / "shared-ignore").write_text("*.py\n")
    os.symlink("shared-ignore", tmp_path / ".gitignore")  # git does not follow it either
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "sub" / ".gitignore")
    os.mkfifo(tmp_path / ".ragignore")
    rules = _in_thread(lambda: IgnoreRules(tmp_path, Settings()))
    assert isinstance(rules, IgnoreRules)
    assert not _in_thread(lambda: rules.ignored("sub/x.py", is_dir=False))
    os.mkfifo(tmp_path / ".ragls.toml")
    resolved = _in_thread(lambda: resolve_settings(tmp_path))
    assert resolved.settings == Settings() and not resolved.warnings  # type: ignore[union-attr]
