"""The owner lock and socket on real files and sockets: permissions, framing, errors, takeover
signals. The processes-level behaviour is in tests/e2e/test_mcp.py."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from ragls.config import Settings
from ragls.owner import OwnerClient, OwnerGone, OwnerLock, OwnerServer, RemoteError, rendezvous
from ragls.protocol import SymbolParams


class Echo(BaseModel):
    echoedText: str


def handlers(release: threading.Event) -> dict[str, Any]:
    def slow(_p: dict[str, Any], _cid: str) -> dict[str, Any]:
        release.wait(10)
        return {"slow": True}

    return {
        "echo": lambda p, cid: Echo(echoedText=f"{p.get('text')}@{cid}"),
        "symbol": lambda p, _cid: SymbolParams.model_validate(p),
        "boom": lambda _p, _cid: 1 / 0,
        "slow": slow,
    }


@pytest.fixture
def served(tmp_path: Path) -> Any:
    settings = Settings(cache_dir=str(tmp_path / "cache"))
    where = rendezvous(tmp_path / "ws", settings)
    release = threading.Event()
    gone: list[str] = []
    server = OwnerServer(where.socket, handlers(release), on_disconnect=gone.append)
    server.start()
    yield where, release, gone, server
    release.set()
    server.close()


def raw(sock_path: Path, lines: list[bytes]) -> list[dict[str, Any]]:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(sock_path))
        s.sendall(b"".join(lines))
        s.shutdown(socket.SHUT_WR)
        data = b""
        s.settimeout(10)
        while chunk := s.recv(65536):
            data += chunk
    return [json.loads(line) for line in data.splitlines()]


def test_rendezvous_is_private_and_the_lock_is_exclusive(tmp_path: Path) -> None:
    where = rendezvous(tmp_path / "ws", Settings(cache_dir=str(tmp_path / "cache")))
    assert where.lock.parent == tmp_path / "cache" / "run"
    assert (where.lock.parent.stat().st_mode & 0o777) == 0o700
    first, second = OwnerLock(where.lock), OwnerLock(where.lock)
    assert first.try_acquire() and not second.try_acquire()
    assert where.lock.read_text().strip() == str(os.getpid())
    first.release()
    assert second.try_acquire()  # released locks are free at once
    second.release()


@pytest.fixture
def short_tmp(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Short private folders standing in for $XDG_RUNTIME_DIR and the temp folder, so the
    socket folders the tests make do not pile up in /tmp; XDG_RUNTIME_DIR unset at first."""
    made = [Path(tempfile.mkdtemp(prefix="rgo-", dir="/tmp")) for _ in range(2)]
    xdg, tmp = made
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    yield xdg, tmp
    for d in made:
        shutil.rmtree(d, ignore_errors=True)


def deep_cache(tmp_path: Path) -> Settings:
    return Settings(cache_dir=str(tmp_path / ("d" * 60) / ("e" * 60)))


def test_long_cache_paths_move_the_socket_to_a_short_private_dir(tmp_path: Path, short_tmp: Any) -> None:
    _xdg, tmp = short_tmp
    settings = deep_cache(tmp_path)
    where = rendezvous(tmp_path / "ws", settings)
    assert len(os.fsencode(where.socket)) <= 107
    short = where.socket.parent
    st = os.lstat(short)
    assert stat.S_ISDIR(st.st_mode) and (st.st_mode & 0o777) == 0o700 and st.st_uid == os.getuid()
    # Not a name another user could make first (`/tmp/ragls-<uid>`): mkdtemp's, recorded in the cache.
    assert short.parent == tmp and short.name != f"ragls-{os.getuid()}" and short.name.startswith("ragls-sock-")
    run = Path(settings.cache_dir) / "run"
    assert where.lock.parent == run
    assert (run / "short-dir").read_text().strip() == str(short)
    assert (run / "short-dir").stat().st_mode & 0o077 == 0
    assert rendezvous(tmp_path / "ws", settings) == where  # every process finds the same one
    other = rendezvous(tmp_path / "ws2", settings).socket
    assert other.parent == short and other != where.socket


def test_the_recorded_socket_folder_is_found_whatever_the_environment(
    tmp_path: Path, short_tmp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    xdg, tmp = short_tmp
    settings = deep_cache(tmp_path)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    first = rendezvous(tmp_path / "ws", settings)
    assert first.socket.parent.parent == xdg  # the runtime folder is preferred when private
    monkeypatch.delenv("XDG_RUNTIME_DIR")  # a process started over ssh, say
    second = rendezvous(tmp_path / "ws", settings)
    assert second.socket == first.socket
    release = threading.Event()
    server = OwnerServer(first.socket, handlers(release))
    server.start()
    try:
        client = OwnerClient(second.socket)
        assert client.call("echo", {"text": "found"})["echoedText"].startswith("found@")
        client.close()
    finally:
        release.set()
        server.close()
    assert not list(tmp.iterdir())  # nothing was made in the temp folder


@pytest.mark.parametrize("spoil", ["loosened", "removed", "symlink", "unsafe parent"])
def test_a_recorded_socket_folder_that_is_not_private_is_replaced(
    tmp_path: Path, short_tmp: Any, spoil: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    xdg, tmp = short_tmp
    settings = deep_cache(tmp_path)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    first = rendezvous(tmp_path / "ws", settings).socket.parent
    if spoil == "loosened":
        first.chmod(0o755)
    elif spoil == "removed":  # a reboot emptied the runtime folder
        first.rmdir()
    elif spoil == "symlink":
        first.rmdir()
        first.symlink_to(tmp)
    else:  # the runtime folder became writable by everyone, without the sticky bit
        xdg.chmod(0o777)
    second = rendezvous(tmp_path / "ws", settings).socket.parent
    assert second != first
    st = os.lstat(second)
    assert stat.S_ISDIR(st.st_mode) and (st.st_mode & 0o777) == 0o700
    assert (Path(settings.cache_dir) / "run" / "short-dir").read_text().strip() == str(second)
    if spoil == "unsafe parent":
        assert second.parent == tmp  # the runtime folder is skipped as a base too
    xdg.chmod(0o700)


def test_socket_is_user_only(served: Any) -> None:
    where, *_ = served
    assert (where.socket.stat().st_mode & 0o777) == 0o600


def test_framing_and_errors(served: Any) -> None:
    where, *_ = served
    out = raw(
        where.socket,
        [
            b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"hi"}}\n',
            b"not json\n",
            b"\n",
            b'{"jsonrpc":"2.0","id":2,"method":"nope"}\n',
            b'{"jsonrpc":"2.0","id":3,"method":"symbol","params":{"name":"  "}}\n',
            b'{"jsonrpc":"2.0","id":4,"method":"boom"}\n',
            b'{"jsonrpc":"2.0","id":5,"method":"echo","params":[1]}\n',
            b"[1, 2]\n",
            b'{"jsonrpc":"2.0","method":"echo","params":{}}\n',  # a notification: no answer
        ],
    )
    by_id = {m.get("id"): m for m in out}
    assert by_id[1]["result"]["echoedText"].startswith("hi@client-")
    assert by_id[2]["error"]["code"] == -32601
    assert by_id[3]["error"]["code"] == -32602 and "name" in by_id[3]["error"]["message"]
    assert by_id[4]["error"]["code"] == -32603 and "ZeroDivisionError" in by_id[4]["error"]["message"]
    assert by_id[5]["error"]["code"] == -32602
    codes = sorted(m["error"]["code"] for m in out if m.get("id") is None)
    assert codes == [-32700, -32600]
    assert len(out) == 7


def test_client_multiplexes_and_a_slow_request_blocks_nothing(served: Any) -> None:
    where, release, gone, _ = served
    client = OwnerClient(where.socket)
    slow: list[Any] = []
    t = threading.Thread(target=lambda: slow.append(client.call("slow", {}, timeout=10)))
    t.start()
    t0 = time.monotonic()
    assert client.call("echo", {"text": "fast"})["echoedText"].startswith("fast@")
    assert time.monotonic() - t0 < 2 and not slow
    release.set()
    t.join(10)
    assert slow == [{"slow": True}]
    with pytest.raises(RemoteError) as info:
        client.call("symbol", {"name": ""})
    assert info.value.code == -32602
    client.close()
    deadline = time.monotonic() + 5
    while not gone and time.monotonic() < deadline:
        time.sleep(0.02)
    assert gone and gone[0].startswith("client-")  # the owner drops the client's buffers


def test_owner_closing_is_seen_by_clients_at_once(served: Any) -> None:
    where, _release, _gone, server = served
    lost = threading.Event()
    client = OwnerClient(where.socket, on_lost=lost.set)
    waiting: list[BaseException] = []

    def call() -> None:
        try:
            client.call("slow", {}, timeout=10)
        except BaseException as exc:
            waiting.append(exc)

    t = threading.Thread(target=call)
    t.start()
    time.sleep(0.2)
    server.close()
    assert lost.wait(5)
    t.join(5)
    assert waiting and isinstance(waiting[0], OwnerGone)
    with pytest.raises(OwnerGone):
        client.call("echo", {})
    assert not where.socket.exists()


def test_empty_socket_folders_left_by_dropped_caches_are_pruned(tmp_path: Path, short_tmp: Any) -> None:
    _xdg, tmp = short_tmp
    stale, busy, fresh, foreign = (tmp / f"ragls-sock-{n}" for n in ("stale", "busy", "fresh", "x"))
    for d in (stale, busy, fresh):
        d.mkdir(mode=0o700)
    (busy / "a.sock").touch()
    foreign.symlink_to(tmp_path)  # not a folder of ours: never followed or removed
    day_ago = time.time() - 2 * 24 * 3600
    for d in (stale, busy):
        os.utime(d, (day_ago, day_ago))
    made = rendezvous(tmp_path / "ws", deep_cache(tmp_path)).socket.parent
    assert made.parent == tmp
    assert not stale.exists() and busy.exists() and fresh.exists() and foreign.is_symlink()


def test_every_face_closes_up_a_readable_cache_before_it_shares(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "index").mkdir(parents=True)
    emb = cache / "embeddings.sqlite"
    emb.touch()
    for p, m in ((cache, 0o755), (cache / "index", 0o750), (emb, 0o644)):
        p.chmod(m)
    rendezvous(tmp_path / "ws", Settings(cache_dir=str(cache)))  # `ragls mcp`, status, check, clear
    assert [stat.S_IMODE(p.stat().st_mode) for p in (cache, cache / "index", emb)] == [0o700, 0o700, 0o600]


def test_index_files_are_private_whatever_the_umask(tmp_path: Path) -> None:
    from ragls.embedding.cache import EmbeddingCache
    from ragls.store.manifest import Manifest

    old = os.umask(0o022)  # a library user that never set ragls's umask
    try:
        Manifest(tmp_path / "c" / "index" / "ws" / "manifest.sqlite")
        EmbeddingCache(tmp_path / "c" / "embeddings.sqlite", "m", 4)
    finally:
        os.umask(old)
    for d, _subdirs, files in os.walk(tmp_path / "c"):
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700, d
        for f in files:
            assert stat.S_IMODE(os.stat(Path(d, f)).st_mode) == 0o600, f
