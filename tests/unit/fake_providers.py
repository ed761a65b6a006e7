"""A scriptable fake of the embedding providers' wire formats, on 127.0.0.1 over real HTTP.

Routes: POST /v1/embeddings and /embeddings (OpenAI / Copilot), POST /api/embed (Ollama),
GET /copilot_internal/v2/token (Copilot session token). Requests sent through it as an HTTP
proxy (absolute-form targets) are answered the same way and flagged `via_proxy`.

Each route answers from its script (a list of `Reply`s, consumed in order), then `ok`."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import numpy as np


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None  # None: a valid answer for the route
    delay: float = 0.0  # seconds before answering (timeouts)


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float
    via_proxy: bool


def fake_vector(text: str, dim: int) -> list[float]:
    """Deterministic, deliberately not unit length, so normalisation is visible."""
    seed = int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)
    return (np.random.default_rng(seed).standard_normal(dim) * 3.0).round(6).tolist()


class FakeProviders:
    def __init__(self, dim: int = 8, port: int = 0) -> None:
        self.dim = dim
        self.scripts: dict[str, list[Reply]] = defaultdict(list)
        self.seen: list[Seen] = []
        self.token_counter = 0
        self.token_ttl = 1800.0  # seconds from now; negative = already expired
        self.token_api: str | None = None  # endpoints.api in the token answer
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeProviders:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def script(self, path: str, *replies: Reply) -> None:
        self.scripts[path].extend(replies)

    def requests(self, path: str) -> list[Seen]:
        return [s for s in self.seen if s.path == path]

    # -- answers -----------------------------------------------------------------------------
    def _answer(self, path: str, body: Any) -> Any:
        if path == "/copilot_internal/v2/token":
            with self._lock:
                self.token_counter += 1
                n = self.token_counter
            answer: dict[str, Any] = {
                "token": f"tid=session-{n};exp=1",
                "expires_at": int(time.time() + self.token_ttl),
                "refresh_in": 1500,
            }
            if self.token_api:
                answer["endpoints"] = {"api": self.token_api}
            return answer
        texts = body["input"]
        dim = int(body.get("dimensions") or self.dim)
        if path == "/api/embed":
            return {"model": body["model"], "embeddings": [fake_vector(t, dim) for t in texts]}
        # OpenAI / Copilot: answer out of order, as the `index` field allows.
        data = [{"object": "embedding", "index": i, "embedding": fake_vector(t, dim)} for i, t in enumerate(texts)]
        return {"object": "list", "data": data[::-1], "model": body["model"], "usage": {"prompt_tokens": 1}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # quiet test output
                pass

            def _serve(self) -> None:
                via_proxy = self.path.startswith("http://")
                path = urlsplit(self.path).path
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with fake._lock:
                    fake.seen.append(Seen(self.command, path, dict(self.headers), body, time.monotonic(), via_proxy))
                    reply = fake.scripts[path].pop(0) if fake.scripts[path] else Reply()
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    if reply.delay:
                        time.sleep(reply.delay)
                    if reply.body is not None:
                        out = reply.body
                    elif reply.status >= 400:
                        out = json.dumps({"error": {"message": f"scripted {reply.status}"}}).encode()
                    else:
                        out = json.dumps(fake._answer(path, body)).encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(out)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)
                finally:
                    with fake._lock:
                        fake.in_flight -= 1

            do_GET = _serve
            do_POST = _serve

        return Handler
