"""The owner lock and socket on real files and sockets: permissions, framing, errors, takeover
signals. The processes-level behaviour is in tests/e2e/test_mcp.py."""

from __future__ import annotations

import json
import os
import socket
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


def test_long_cache_paths_move_the_socket_to_a_short_private_dir(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    where = rendezvous(tmp_path / "ws", Settings(cache_dir=str(deep)))
    assert len(os.fsencode(where.socket)) <= 107
    assert (where.socket.parent.stat().st_mode & 0o777) == 0o700
    assert where.lock.parent == deep / "run"


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
