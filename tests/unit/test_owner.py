"""The owner lock and socket on real files and sockets: permissions, the index API over pygls's
JSON-RPC (framing, errors, params validated by the method table's models), takeover signals.
The processes-level behaviour is in tests/e2e/test_mcp.py."""

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
from ragls.protocol import (
    Empty,
    OwnerHello,
    RetrieveParams,
    RetrieveResultOut,
    StatusEnvelope,
    SymbolParams,
)
from ragls.sharing.api import FIND_SYMBOL, HELLO, METHODS, OPEN_DOCUMENT, RETRIEVE, STATUS, InvalidParams, Method
from ragls.sharing.owner import OwnerLock, rendezvous
from ragls.sharing.owner_rpc import OwnerGone, OwnerProxy, OwnerServer, RemoteError
from ragls.status import starting_status


def answers(release: threading.Event, seen: list[tuple[str, BaseModel, str]]) -> Any:
    """An owner's answers: hello names the connection, status waits for `release`, retrieve of
    "boom" fails, document methods are recorded."""

    def answer(method: Method, params: BaseModel, cid: str) -> BaseModel:
        seen.append((method.name, params, cid))
        if method is HELLO:
            return OwnerHello(workspace=cid, version="test", pid=os.getpid())
        if method is STATUS:
            release.wait(10)
            return StatusEnvelope(status=starting_status(None, Settings(), None), runs=7)
        if method is RETRIEVE:
            assert isinstance(params, RetrieveParams)
            if params.query == "boom":
                raise ZeroDivisionError("division by zero")
            return RetrieveResultOut(context=params.query, chunks=[], took_ms=1.0)
        if method is FIND_SYMBOL:
            raise InvalidParams("kind: not a kind")
        return Empty()

    return answer


@pytest.fixture
def served(tmp_path: Path) -> Any:
    settings = Settings(cache_dir=str(tmp_path / "cache"))
    where = rendezvous(tmp_path / "ws", settings)
    release = threading.Event()
    gone: list[str] = []
    seen: list[tuple[str, BaseModel, str]] = []
    server = OwnerServer(where.socket, answers(release, seen), on_disconnect=gone.append)
    server.start()
    yield where, release, gone, server, seen
    release.set()
    server.close()


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(rid: int | None, method: str, params: Any = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if rid is not None:
        msg["id"] = rid
    if params is not None:
        msg["params"] = params
    return frame(json.dumps(msg).encode())


def read_frames(data: bytes) -> list[dict[str, Any]]:
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        n = int(next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")).split(b":")[1])
        out.append(json.loads(rest[:n]))
        data = rest[n:]
    return out


def raw(sock_path: Path, chunks: list[bytes]) -> list[dict[str, Any]]:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(sock_path))
        s.sendall(b"".join(chunks))
        s.shutdown(socket.SHUT_WR)
        data = b""
        s.settimeout(10)
        while chunk := s.recv(65536):
            data += chunk
    return read_frames(data)


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
    server = OwnerServer(first.socket, answers(threading.Event(), []))
    server.start()
    try:
        proxy = OwnerProxy(second.socket)
        assert proxy.hello().workspace.startswith("client-")
        proxy.close()
    finally:
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


def test_every_method_of_the_table_is_served_and_documented() -> None:
    from ragls.sharing.schema import protocol_schema

    schema = protocol_schema()["ownerSocket"]
    assert set(schema) == set(METHODS)
    for name, method in METHODS.items():
        assert method.name == name
        assert schema[name]["kind"] == "request"


def test_framing_and_errors(served: Any) -> None:
    """LSP framing (Content-Length) both ways; every error answered with its JSON-RPC code, the
    params checked by the method table's models."""
    where, _release, _gone, _server, seen = served
    out = raw(
        where.socket,
        [
            request(1, "rag/hello", {}),
            frame(b"not json"),
            request(2, "nope"),
            request(3, "rag/findSymbol", {"name": "  "}),
            request(4, "rag/retrieve", {"query": "boom"}),
            request(5, "rag/hello", [1]),
            frame(b"[1, 2]"),
            request(None, "rag/hello", {}),  # a notification: no answer
            b"garbage, not a header\r\n",  # a framing fault: a parse error, then the next message
            request(6, "rag/retrieve", {"query": "fine", "topK": 500}),
            request(7, "rag/openDocument", {"path": "a.py"}),
            request(8, "rag/hello"),  # params may be left out
            request(9, "rag/findSymbol", {"name": "x"}),
        ],
    )
    by_id = {m.get("id"): m for m in out}
    assert by_id[1]["result"]["workspace"].startswith("client-")
    assert by_id[2]["error"]["code"] == -32601
    assert by_id[3]["error"]["code"] == -32602 and "name" in by_id[3]["error"]["message"]
    assert by_id[4]["error"]["code"] == -32603 and "ZeroDivisionError" in by_id[4]["error"]["message"]
    assert by_id[5]["error"]["code"] == -32602
    assert by_id[6]["error"]["code"] == -32602 and "topK" in by_id[6]["error"]["message"]
    assert by_id[7]["result"] == {}  # text checked by the index (LocalIndex), not by this fake
    assert by_id[8]["result"]["workspace"].startswith("client-")
    assert by_id[9]["error"] == {"code": -32602, "message": "kind: not a kind"}
    codes = sorted(m["error"]["code"] for m in out if m.get("id") is None)
    assert codes == [-32700, -32700, -32600]
    assert len(out) == 12
    assert [name for name, _, _ in seen].count("rag/hello") == 3  # the notification ran, unanswered


def test_client_multiplexes_and_a_slow_request_blocks_nothing(served: Any) -> None:
    where, release, gone, _server, seen = served
    proxy = OwnerProxy(where.socket)
    slow: list[Any] = []
    t = threading.Thread(target=lambda: slow.append(proxy.status()))
    t.start()
    t0 = time.monotonic()
    assert proxy.retrieve(RetrieveParams(query="fast")).context == "fast"
    assert time.monotonic() - t0 < 2 and not slow
    release.set()
    t.join(10)
    assert slow and slow[0].runs == 7
    with pytest.raises(InvalidParams, match="kind: not a kind"):
        proxy.find_symbol(SymbolParams(name="x"))
    with pytest.raises(RemoteError) as info:
        proxy.retrieve(RetrieveParams(query="boom"))
    assert info.value.code == -32603
    # Unset fields stay unset on the way: the owner's settings decide them.
    sent = next(p for name, p, _ in seen if name == "rag/retrieve")
    assert sent.model_fields_set == {"query"}
    proxy.open_document("src/a.py", "text")
    assert seen[-1][0] == OPEN_DOCUMENT.name and seen[-1][2].startswith("client-")
    proxy.close()
    deadline = time.monotonic() + 5
    while not gone and time.monotonic() < deadline:
        time.sleep(0.02)
    assert gone and gone[0].startswith("client-")  # the owner drops the client's buffers


def test_owner_closing_is_seen_by_clients_at_once(served: Any) -> None:
    where, _release, _gone, server, _seen = served
    lost = threading.Event()
    proxy = OwnerProxy(where.socket, on_lost=lost.set)
    waiting: list[BaseException] = []

    def call() -> None:
        try:
            proxy.status()
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
        proxy.hello()
    assert not where.socket.exists()


def test_a_closed_proxy_calls_no_takeover(served: Any) -> None:
    where, *_ = served
    lost = threading.Event()
    proxy = OwnerProxy(where.socket, on_lost=lost.set)
    proxy.close()
    assert not lost.wait(0.5)
    with pytest.raises(OwnerGone):
        proxy.hello()


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
