"""One index per folder per machine: the owner lock, the owner socket, and its client.

The first ragls process that takes a folder's lock (`flock`, released by the OS when the
holder dies, kill -9 included) owns the folder's index and serves every other local ragls
process over a unix socket beside the lock. The wire format is newline-delimited JSON-RPC
2.0: one request or response object per line, UTF-8, the `rag/*` payloads of
docs/protocol.md ("Owner socket" lists the methods). Both files live in a directory only the
user can enter (0700); the socket itself is 0600 and peers of another uid are refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import os
import socket
import socketserver
import stat
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ragls.config import Settings, cache_root
from ragls.private import private_dirs, secure_cache
from ragls.store import workspace_id

try:
    import fcntl
except ImportError:  # Windows: no flock and no unix sockets to share an index over
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

MAX_LINE = 64 * 1024 * 1024  # an open buffer travels in one line; editors cap files well below this
# sockaddr_un.sun_path, terminating NUL excluded: 108 bytes on Linux, 104 on macOS and the BSDs
_SUN_PATH_MAX = 107 if sys.platform.startswith("linux") else 103

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class OwnerGone(ConnectionError):
    """The owner closed the connection or could not be reached."""


class RemoteError(RuntimeError):
    """The owner answered with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class InvalidParams(ValueError):
    """Raised by a method handler: answered as -32602 with this message."""


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


def _peer_uid(sock: socket.socket) -> int | None:
    """The peer's uid on Linux; None elsewhere, where the 0700 directory is the only guard."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def _trusted(uid: int | None) -> bool:
    return uid is None or uid in (os.getuid(), 0)


def error_message(err: ValidationError) -> str:
    parts = []
    for e in err.errors()[:5]:
        loc = ".".join(str(p) for p in e["loc"]) or "params"
        parts.append(f"{loc}: {e['msg']}")
    return "; ".join(parts)


# A method handler gets the params object and the connection's id (for per-client state such
# as open buffers) and returns a pydantic model or a JSON-able value.
Handler = Callable[[dict[str, Any], str], Any]


class OwnerServer:
    """Serves `handlers` on the folder's socket: one thread per connection, requests of one
    connection handled concurrently (a slow search never holds up a status call)."""

    def __init__(
        self, path: Path, handlers: dict[str, Handler], on_disconnect: Callable[[str], None] | None = None
    ) -> None:
        self.path = path
        self.handlers = handlers
        self.on_disconnect = on_disconnect or (lambda _cid: None)
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="ragls-owner")
        self._ids = itertools.count(1)
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        outer = self

        class _Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                outer._serve_connection(self.request, self.rfile)

        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a socket left by a killed owner; we hold the lock, so it is stale
        self._server = socketserver.ThreadingUnixStreamServer(str(path), _Handler)
        self._server.daemon_threads = True
        os.chmod(path, 0o600)
        self._thread = threading.Thread(target=self._server.serve_forever, name="ragls-owner-socket", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            conns = list(self._conns)
        for c in conns:  # clients see EOF at once and take over
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _serve_connection(self, conn: socket.socket, rfile: Any) -> None:
        if not _trusted(_peer_uid(conn)):
            log.warning("refused a connection from another user")
            return
        cid = f"client-{next(self._ids)}"
        write_lock = threading.Lock()
        with self._lock:
            self._conns.add(conn)

        def send(obj: dict[str, Any]) -> None:
            data = (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "surrogatepass")
            with write_lock, contextlib.suppress(OSError):
                conn.sendall(data)

        pending: list[Future[None]] = []
        try:
            while True:
                line = rfile.readline(MAX_LINE + 1)
                if not line:
                    break
                if len(line) > MAX_LINE:
                    send(_error(None, INVALID_REQUEST, "message too long"))
                    break
                if not line.strip():
                    continue
                try:
                    msg = json.loads(line)
                except (ValueError, RecursionError) as exc:
                    send(_error(None, PARSE_ERROR, f"cannot parse message: {exc}"))
                    continue
                if not isinstance(msg, dict) or not isinstance(msg.get("method"), str):
                    send(_error(msg.get("id") if isinstance(msg, dict) else None, INVALID_REQUEST, "not a request"))
                    continue
                pending = [f for f in pending if not f.done()]
                pending.append(self._pool.submit(self._dispatch, msg, cid, send))
            # The client may have half-closed after its last request: answer what it sent.
            futures_wait(pending, timeout=60)
        finally:
            with self._lock:
                self._conns.discard(conn)
            try:
                self.on_disconnect(cid)
            except Exception:
                log.exception("cleaning up after a client failed")

    def _dispatch(self, msg: dict[str, Any], cid: str, send: Callable[[dict[str, Any]], None]) -> None:
        rid = msg.get("id")
        handler = self.handlers.get(msg["method"])
        if handler is None:
            if rid is not None:
                send(_error(rid, METHOD_NOT_FOUND, f"unknown method {msg['method']}"))
            return
        params = msg.get("params") or {}
        try:
            if not isinstance(params, dict):
                raise InvalidParams("params must be an object")
            result = handler(params, cid)
        except ValidationError as exc:
            resp = _error(rid, INVALID_PARAMS, error_message(exc))
        except InvalidParams as exc:
            resp = _error(rid, INVALID_PARAMS, str(exc))
        except Exception as exc:  # a failing request must not take the owner down
            log.exception("owner request %s failed", msg["method"])
            resp = _error(rid, INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
        else:
            if isinstance(result, BaseModel):
                result = result.model_dump(by_alias=True)
            resp = {"jsonrpc": "2.0", "id": rid, "result": result}
        if rid is not None:
            send(resp)


def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


class OwnerClient:
    """A connection to the owner. `call` is thread-safe; requests are multiplexed by id."""

    def __init__(self, path: Path, on_lost: Callable[[], None] | None = None, timeout: float = 2.0) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        try:
            self._sock.connect(str(path))
        except OSError:
            self._sock.close()
            raise
        self._sock.settimeout(None)
        if not _trusted(_peer_uid(self._sock)):
            self._sock.close()
            raise PermissionError("the owner socket belongs to another user")
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[threading.Event, list[Any]]] = {}
        self._lock = threading.Lock()
        self._write = threading.Lock()
        self._closed = threading.Event()
        self._on_lost = on_lost
        self._reader = threading.Thread(target=self._read, name="ragls-owner-client", daemon=True)
        self._reader.start()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float | None = 120.0) -> Any:
        if self._closed.is_set():
            raise OwnerGone("the owner connection is closed")
        rid = next(self._ids)
        done = threading.Event()
        slot: list[Any] = []
        with self._lock:
            self._pending[rid] = (done, slot)
        data = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}, ensure_ascii=False)
        try:
            with self._write:
                self._sock.sendall((data + "\n").encode("utf-8", "surrogatepass"))
        except OSError as exc:
            with self._lock:
                self._pending.pop(rid, None)
            self._lost()
            raise OwnerGone(f"cannot reach the owner: {exc}") from exc
        if not done.wait(timeout):
            with self._lock:
                self._pending.pop(rid, None)
            raise TimeoutError(f"the owner did not answer {method} within {timeout:.0f}s")
        if not slot:
            raise OwnerGone("the owner went away")
        msg = slot[0]
        if "error" in msg:
            err = msg["error"] or {}
            raise RemoteError(int(err.get("code", INTERNAL_ERROR)), str(err.get("message", "owner error")))
        return msg.get("result")

    def _read(self) -> None:
        rfile = self._sock.makefile("rb")
        try:
            while True:
                line = rfile.readline(MAX_LINE + 1)
                if not line:
                    break
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(msg, dict):
                    continue
                with self._lock:
                    entry = self._pending.pop(msg.get("id"), None)  # type: ignore[arg-type]
                if entry is not None:
                    entry[1].append(msg)
                    entry[0].set()
        except OSError:
            pass
        finally:
            self._lost()

    def _lost(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        with self._lock:
            pending = list(self._pending.values())
            self._pending.clear()
        for done, _ in pending:
            done.set()  # waiters see an empty slot: OwnerGone
        with contextlib.suppress(OSError):
            self._sock.close()
        if self._on_lost is not None:
            self._on_lost()

    def close(self) -> None:
        self._on_lost = None
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._lost()
