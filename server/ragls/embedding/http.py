"""HTTP embedding providers: OpenAI-compatible `/v1/embeddings`, Ollama `/api/embed`, and
GitHub Copilot (OAuth sign-in of an editor plugin -> session token -> `/embeddings`).

All share one request loop: 429 honours Retry-After (else exponential backoff from
`retryBaseMs`, capped at `retryMaxMs`), 5xx and timeouts are retried `maxRetries` times, a
401 re-acquires the credential once, any other 4xx fails at once. A batch that finally fails
raises EmbeddingError; the indexer marks its files failed and retries them on the next pass.
Keys and tokens live in `Secret` holders, are masked out of every message, and never logged.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from ragls import __version__
from ragls.config import EmbedderSettings
from ragls.embedding.base import Embedder, EmbeddingError
from ragls.ingest.secrets import redact

log = logging.getLogger(__name__)

LOCAL_DEFAULT_MODEL = "all-MiniLM-L6-v2"  # EmbedderSettings' default names the bundled model
DEFAULT_MODEL = {
    "openai": "text-embedding-3-small",
    "ollama": "nomic-embed-text",
    "copilot": "copilot-text-embedding-ada-002",
}
KNOWN_DIMENSIONS = {
    "openai": {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536},
    "ollama": {
        "nomic-embed-text": 768,
        "mxbai-embed-large": 1024,
        "all-minilm": 384,
        "bge-m3": 1024,
        "snowflake-arctic-embed": 1024,
        "bge-large": 1024,
    },
    "copilot": {"copilot-text-embedding-ada-002": 1536, "text-embedding-3-small": 1536},
}
DEFAULT_BASE = {
    "openai": "https://api.openai.com/v1",
    "ollama": "http://localhost:11434",
    "copilot": "https://api.githubcopilot.com",
}
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY"}
GITHUB_API = "https://api.github.com"
COPILOT_MAX_BATCH = 50
TOKEN_REFRESH_MARGIN_S = 300  # refresh the Copilot session token 5 minutes before it expires
TOKEN_FILE_ENV = "RAGLS_COPILOT_TOKEN_FILE"
# Remote models reject inputs over ~8k tokens with a 400 that would fail the whole batch; chunks
# are far smaller by default, so this only trims pathological ones (code is ~3-4 chars/token).
MAX_INPUT_CHARS = 16_000
# Query embeddings block a chat request: fewer, shorter retries than the background indexer.
QUERY_MAX_RETRIES = 2
QUERY_MAX_WAIT_S = 2.0
# What the open-source Copilot clients send; the Copilot API expects an editor identity.
COPILOT_HEADERS = {
    "Editor-Version": "vscode/1.99.3",
    "Editor-Plugin-Version": "copilot-chat/0.26.7",
    "Copilot-Integration-Id": "vscode-chat",
    "User-Agent": f"ragls/{__version__}",
}


class Secret:
    """Holds a credential; its repr and str never show it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret(***)"

    __str__ = __repr__


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    base_s: float = 0.5
    cap_s: float = 30.0
    jitter: float = 0.1  # fraction added at random, so that many clients do not retry in step

    def backoff(self, attempt: int) -> float:
        return min(self.cap_s, self.base_s * 2**attempt * (1 + self.jitter * random.random()))


def retry_after_s(value: str | None) -> float | None:
    """Retry-After is either delay-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class ProviderHTTPError(EmbeddingError):
    """The provider refused the request for good (a 4xx other than 429)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class _Transient(Exception):
    """One failed attempt that may be retried after `wait` seconds (None = backoff)."""

    def __init__(self, message: str, wait: float | None = None) -> None:
        super().__init__(message)
        self.wait = wait


class HttpEmbedder:
    """Shared machinery: batching, secret guard, request loop, normalisation."""

    provider = "http"
    max_batch = 512

    def __init__(
        self,
        settings: EmbedderSettings,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.model = settings.model if settings.model != LOCAL_DEFAULT_MODEL else DEFAULT_MODEL[self.provider]
        self.model_id = f"{self.provider}:{self.model}"
        self.batch_size = max(1, min(settings.batch_size, self.max_batch))
        self.policy = RetryPolicy(settings.max_retries, settings.retry_base_ms / 1000, settings.retry_max_ms / 1000)
        self._sleep = sleep
        self._clock = clock
        self._secrets: list[Secret] = []  # everything to mask out of messages
        # One semaphore per instance bounds requests in flight from every thread together.
        self._slots = threading.BoundedSemaphore(settings.max_concurrency)
        self._http = httpx.Client(
            timeout=settings.timeout_s, proxy=settings.proxy or None, headers={"User-Agent": f"ragls/{__version__}"}
        )
        self.dimension = 0
        try:
            self.dimension = self._initial_dimension()
        except BaseException:
            self._http.close()  # the embedder is never returned: do not leak its connections
            raise

    # -- provider hooks ----------------------------------------------------------------------
    def _url(self) -> str:
        raise NotImplementedError

    def _auth_headers(self) -> dict[str, str]:
        return {}

    def _reauth(self) -> bool:
        """Called on a 401: drop the cached credential; True if a retry may succeed."""
        return False

    def _body(self, texts: list[str]) -> dict[str, Any]:
        raise NotImplementedError

    def _rows(self, data: Any) -> list[Any]:
        raise NotImplementedError

    # -- Embedder ----------------------------------------------------------------------------
    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        parts = [
            self._embed_batch(texts[i : i + self.batch_size], self.policy)
            for i in range(0, len(texts), self.batch_size)
        ]
        return np.vstack(parts)

    def batches(self, texts: list[str]) -> list[list[int]]:
        n = len(texts)
        return [list(range(i, min(i + self.batch_size, n))) for i in range(0, n, self.batch_size)]

    def embed_query(self, text: str) -> np.ndarray:
        quick = replace(
            self.policy,
            max_retries=min(self.policy.max_retries, QUERY_MAX_RETRIES),
            cap_s=min(self.policy.cap_s, QUERY_MAX_WAIT_S),
        )
        return self._embed_batch([text], quick)[0]

    def close(self) -> None:
        self._http.close()

    # -- internals ---------------------------------------------------------------------------
    def _initial_dimension(self) -> int:
        if self.settings.dimensions:
            return self.settings.dimensions
        known = KNOWN_DIMENSIONS.get(self.provider, {}).get(self.model.split(":")[0])
        if known:
            return known
        # Unknown model: ask once. dimension == 0 disables the shape check for this call.
        vec = self._embed_batch(["dimension probe"], self.policy)
        log.info("%s: probed dimension %d", self.model_id, vec.shape[1])
        return int(vec.shape[1])

    def _guard(self, texts: list[str]) -> list[str]:
        """Belt and braces: the indexer redacts already, but nothing secret-looking may leave."""
        out: list[str] = []
        redacted = 0
        for t in texts:
            clean, n = redact(t)
            redacted += n
            out.append(clean[:MAX_INPUT_CHARS])
        if redacted:
            log.warning("%s: redacted %d secret-looking line(s) before sending", self.model_id, redacted)
        return out

    def _embed_batch(self, texts: list[str], policy: RetryPolicy) -> np.ndarray:
        data = self.request_json(
            "POST",
            self._url,
            self._body(self._guard(texts)),
            self._auth_headers,
            self._reauth,
            policy,
            what="embedding request",
        )
        try:
            return self._matrix(self._rows(data), len(texts))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise EmbeddingError(f"{self.model_id}: malformed embedding response ({self._mask(str(exc))})") from exc

    def _matrix(self, rows: list[Any], n: int) -> np.ndarray:
        if len(rows) != n:
            raise ValueError(f"{len(rows)} embeddings for {n} inputs")
        m = np.asarray(rows, dtype=np.float32)
        if m.ndim != 2 or (self.dimension and m.shape[1] != self.dimension):
            raise ValueError(f"embedding shape {m.shape}, expected ({n}, {self.dimension})")
        if not np.all(np.isfinite(m)):
            raise ValueError("non-finite values")
        norms = np.linalg.norm(m, axis=1, keepdims=True)
        if np.any(norms == 0):
            raise ValueError("zero vector")
        return (m / norms).astype(np.float32)

    def _mask(self, text: str) -> str:
        for s in self._secrets:
            if s.get():
                text = text.replace(s.get(), "***")
        return redact(text)[0]

    def request_json(
        self,
        method: str,
        url: Callable[[], str],
        body: dict[str, Any] | None,
        headers: Callable[[], dict[str, str]],
        reauth: Callable[[], bool],
        policy: RetryPolicy,
        what: str,
    ) -> Any:
        """One logical request with retries; returns the decoded JSON body. Headers, then the
        URL, are evaluated per attempt: a re-acquired credential may come with a new endpoint."""
        attempt = 0
        reauthed = False
        while True:
            try:
                hdrs = headers()
                resp = self._attempt(method, url(), body, hdrs)
                if resp.status_code == 401 and not reauthed:
                    reauthed = True
                    if reauth():
                        log.info("%s: %s got 401; re-acquired the credential, retrying once", self.model_id, what)
                        continue
                return self._decode(resp, what, policy)
            except _Transient as exc:
                if attempt >= policy.max_retries:
                    raise EmbeddingError(
                        f"{self.model_id}: {what} failed after {attempt + 1} attempts: {exc}"
                    ) from None
                wait = exc.wait if exc.wait is not None else policy.backoff(attempt)
                log.warning(
                    "%s: %s: %s; retry %d/%d in %.2fs", self.model_id, what, exc, attempt + 1, policy.max_retries, wait
                )
                self._sleep(wait)
                attempt += 1

    def _attempt(self, method: str, url: str, body: dict[str, Any] | None, headers: dict[str, str]) -> httpx.Response:
        # Headers are computed by the caller, outside the semaphore: a Copilot token exchange
        # inside it could deadlock with maxConcurrency = 1.
        with self._slots:
            try:
                return self._http.request(method, url, json=body, headers=headers)
            except httpx.TimeoutException:
                raise _Transient(f"timed out after {self.settings.timeout_s:g}s") from None
            except httpx.TransportError as exc:
                raise _Transient(f"connection failed ({type(exc).__name__}: {self._mask(str(exc))[:200]})") from None

    def _decode(self, resp: httpx.Response, what: str, policy: RetryPolicy) -> Any:
        code = resp.status_code
        if 200 <= code < 300:
            try:
                return resp.json()
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise EmbeddingError(f"{self.model_id}: {what}: malformed JSON in the response") from None
        excerpt = self._mask(resp.text[:300].replace("\n", " ")) if resp.content else ""
        if code == 429:
            wait = retry_after_s(resp.headers.get("Retry-After"))
            if wait is not None and wait > policy.cap_s:
                # Waiting longer would stall indexing or a chat request; fail and retry next pass.
                raise EmbeddingError(f"{self.model_id}: rate limited for {wait:.0f}s (HTTP 429)")
            raise _Transient("rate limited (HTTP 429)", wait)
        if code >= 500 or code == 408:
            raise _Transient(f"HTTP {code} {excerpt}".strip())
        hint = self._hint(code)
        raise ProviderHTTPError(f"{self.model_id}: {what} failed: HTTP {code} {excerpt}{hint}".strip(), code)

    def _hint(self, code: int) -> str:
        if code in (401, 403):
            env = self.settings.api_key_env or DEFAULT_KEY_ENV.get(self.provider)
            return f" (check the key in ${env})" if env else ""
        return ""


class _KeyedEmbedder(HttpEmbedder):
    """Providers authenticated by an optional bearer key from an environment variable."""

    def __init__(self, settings: EmbedderSettings, **kw: Any) -> None:
        self._key_env = settings.api_key_env or DEFAULT_KEY_ENV.get(self.provider)
        self._key: Secret | None = None
        self._key_lock = threading.Lock()
        self._base = (settings.base_url or DEFAULT_BASE[self.provider]).rstrip("/")
        super().__init__(settings, **kw)

    def _load_key(self) -> Secret | None:
        value = os.environ.get(self._key_env) if self._key_env else None
        if not value:
            return None
        secret = Secret(value)
        self._secrets.append(secret)
        return secret

    def _auth_headers(self) -> dict[str, str]:
        with self._key_lock:
            if self._key is None:
                self._key = self._load_key()
            key = self._key
        return {"Authorization": f"Bearer {key.get()}"} if key else {}

    def _reauth(self) -> bool:
        with self._key_lock:
            self._key = None  # re-read: the variable may have been rotated
        return bool(self._key_env)


class OpenAIEmbedder(_KeyedEmbedder):
    provider = "openai"
    max_batch = 2048

    def _url(self) -> str:
        # OpenAI-style base URLs end in /v1; a bare host (common for self-hosted servers) gets it added.
        base = self._base if httpx.URL(self._base).path.strip("/") else self._base + "/v1"
        return base + "/embeddings"

    def _body(self, texts: list[str]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "input": texts}  # float is the default encoding
        if self.settings.dimensions:
            body["dimensions"] = self.settings.dimensions
        return body

    def _rows(self, data: Any) -> list[Any]:
        items = data["data"]
        return [it["embedding"] for it in sorted(items, key=lambda it: it.get("index", 0))]


class OllamaEmbedder(_KeyedEmbedder):
    provider = "ollama"

    def _url(self) -> str:
        return self._base + "/api/embed"

    def _body(self, texts: list[str]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "input": texts, "truncate": True}
        if self.settings.dimensions:
            body["dimensions"] = self.settings.dimensions
        return body

    def _rows(self, data: Any) -> list[Any]:
        return list(data["embeddings"])


@dataclass
class _Session:
    token: Secret
    expires_at: float
    api: str | None


def copilot_token_files(settings: EmbedderSettings) -> list[Path]:
    """Where editor plugins keep the GitHub OAuth sign-in, most specific first."""
    if settings.token_file:
        return [Path(settings.token_file).expanduser()]
    if env := os.environ.get(TOKEN_FILE_ENV):
        return [Path(env).expanduser()]
    if os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return [base / "github-copilot" / "apps.json", base / "github-copilot" / "hosts.json"]


def read_oauth_token(paths: list[Path]) -> str | None:
    """The first github.com `ghu_` token (else any oauth_token) in apps.json / hosts.json."""
    for path in paths:
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        entries = [(k, v.get("oauth_token")) for k, v in data.items() if isinstance(v, dict)]
        tokens = [(k, t) for k, t in entries if isinstance(t, str) and t]
        tokens.sort(key=lambda kt: (not kt[0].startswith("github.com"), not kt[1].startswith("ghu_")))
        if tokens:
            return tokens[0][1]
    return None


class CopilotEmbedder(HttpEmbedder):
    provider = "copilot"
    max_batch = COPILOT_MAX_BATCH

    def __init__(self, settings: EmbedderSettings, **kw: Any) -> None:
        self._auth_base = (settings.auth_url or GITHUB_API).rstrip("/")
        self._oauth: Secret | None = None
        self._session: _Session | None = None
        self._api: str | None = None  # API endpoint named by the last exchange; kept across 401s
        self._token_lock = threading.Lock()  # one exchange at a time; other threads reuse its result
        super().__init__(settings, **kw)

    # -- credentials -------------------------------------------------------------------------
    def _oauth_token(self, reload: bool = False) -> Secret:
        if self._oauth is None or reload:
            paths = copilot_token_files(self.settings)
            value = read_oauth_token(paths)
            if not value:
                raise EmbeddingError(
                    "copilot: no GitHub Copilot sign-in found in "
                    + ", ".join(str(p) for p in paths)
                    + "; sign in with a Copilot editor plugin, or set embedder.tokenFile"
                )
            self._oauth = Secret(value)
            self._secrets.append(self._oauth)
        return self._oauth

    def _reload_oauth(self) -> bool:
        old = self._oauth.get() if self._oauth else None
        return self._oauth_token(reload=True).get() != old  # retry only if the sign-in changed

    def _exchange(self) -> _Session:
        url = f"{self._auth_base}/copilot_internal/v2/token"

        def headers() -> dict[str, str]:
            return {
                "Authorization": f"token {self._oauth_token().get()}",
                "Accept": "application/json",
                **COPILOT_HEADERS,
            }

        try:
            data = self.request_json(
                "GET", lambda: url, None, headers, self._reload_oauth, self.policy, what="Copilot token exchange"
            )
            token = data["token"]
            expires_at = float(data.get("expires_at") or self._clock() + float(data.get("refresh_in", 1500)))
            api = (data.get("endpoints") or {}).get("api")
        except ProviderHTTPError as exc:
            if exc.status in (401, 403, 404):
                raise ProviderHTTPError(
                    f"{exc} (is GitHub Copilot enabled for this account? sign in again in your editor)", exc.status
                ) from None
            raise
        except (KeyError, TypeError, ValueError, AttributeError):
            raise EmbeddingError("copilot: malformed token exchange response") from None
        session = _Session(Secret(str(token)), expires_at, api if isinstance(api, str) else None)
        self._secrets.append(session.token)
        log.info("copilot: session token acquired, valid for %.0fs", expires_at - self._clock())
        return session

    def _session_token(self) -> _Session:
        with self._token_lock:
            s = self._session
            if s is None or self._clock() >= s.expires_at - TOKEN_REFRESH_MARGIN_S:
                s = self._session = self._exchange()
                self._api = s.api or self._api
            return s

    def _auth_headers(self) -> dict[str, str]:
        s = self._session_token()
        return {"Authorization": f"Bearer {s.token.get()}", "Content-Type": "application/json", **COPILOT_HEADERS}

    def _reauth(self) -> bool:
        with self._token_lock:
            self._session = None  # revoked or expired early: exchange again
        return True

    # -- wire format -------------------------------------------------------------------------
    def _url(self) -> str:
        if self.settings.base_url:
            return self.settings.base_url.rstrip("/") + "/embeddings"
        # Called right after _auth_headers, so the exchange that names the endpoint has run.
        return (self._api or DEFAULT_BASE["copilot"]).rstrip("/") + "/embeddings"

    def _body(self, texts: list[str]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "input": texts}
        if self.settings.dimensions:
            body["dimensions"] = self.settings.dimensions
        return body

    def _rows(self, data: Any) -> list[Any]:
        return [it["embedding"] for it in sorted(data["data"], key=lambda it: it.get("index", 0))]


PROVIDERS: dict[str, type[HttpEmbedder]] = {
    "openai": OpenAIEmbedder,
    "ollama": OllamaEmbedder,
    "copilot": CopilotEmbedder,
}


def make_http_embedder(
    settings: EmbedderSettings, *, sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.time
) -> Embedder:
    cls = PROVIDERS.get(settings.provider)
    if cls is None:
        raise EmbeddingError(f"unknown embedder.provider {settings.provider!r}")
    return cls(settings, sleep=sleep, clock=clock)
