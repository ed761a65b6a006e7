"""HTTP embedding providers against fake servers on 127.0.0.1, over real HTTP: wire formats,
retries and their timing, credential refresh, Copilot batching, proxying, secret hygiene."""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragls.config import EmbedderSettings
from ragls.embedding import EmbeddingError, make_embedder
from ragls.embedding.http import CopilotEmbedder, HttpEmbedder, make_http_embedder, retry_after_s
from tests.unit.fake_providers import FakeProviders, Reply, fake_vector

OAI = "/v1/embeddings"
OLLAMA = "/api/embed"
COPILOT = "/embeddings"
TOKEN = "/copilot_internal/v2/token"
KEY = "sk-test-" + "k" * 32
GHU = "ghu_" + "A" * 36
GHP_LINE = "GITHUB_TOKEN = ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"  # a fill (`ZZZ...`) is a placeholder


@pytest.fixture
def fake() -> Iterator[FakeProviders]:
    with FakeProviders(dim=8) as f:
        yield f


class Sleeps(list[float]):
    """Records requested sleeps instead of sleeping: retry timing without slow tests."""

    def __call__(self, s: float) -> None:
        self.append(s)


def settings(**kw: Any) -> EmbedderSettings:
    base: dict[str, Any] = {"timeoutS": 2.0}
    base.update(kw)
    return EmbedderSettings.model_validate(base)


def openai(
    fake: FakeProviders, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps | None = None, **kw: Any
) -> HttpEmbedder:
    monkeypatch.setenv("RAGLS_TEST_OPENAI_KEY", KEY)
    s = settings(
        provider="openai",
        baseUrl=fake.url + "/v1",
        model="text-embedding-3-small",
        dimensions=8,
        apiKeyEnv="RAGLS_TEST_OPENAI_KEY",
        **kw,
    )
    return make_http_embedder(s, sleep=sleeps if sleeps is not None else Sleeps())  # type: ignore[return-value]


def write_apps_json(path: Path, token: str = GHU) -> Path:
    path.write_text(
        json.dumps(
            {
                "github.com:Iv1.b507a08c87ecfe98": {
                    "user": "dev",
                    "oauth_token": token,
                    "githubAppId": "Iv1.b507a08c87ecfe98",
                }
            }
        )
    )
    return path


def copilot(
    fake: FakeProviders, tmp_path: Path, sleeps: Sleeps | None = None, clock: Any = time.time, **kw: Any
) -> CopilotEmbedder:
    fake.dim = 1536
    fake.token_api = fake.url  # the token answer names the API endpoint, as GitHub's does
    kw.setdefault("tokenFile", str(write_apps_json(tmp_path / "apps.json")))
    kw.setdefault("authUrl", fake.url)
    s = settings(provider="copilot", **kw)
    return make_http_embedder(s, sleep=sleeps if sleeps is not None else Sleeps(), clock=clock)  # type: ignore[return-value]


def unit_rows(texts: list[str], dim: int) -> np.ndarray:
    m = np.array([fake_vector(t, dim) for t in texts], dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


# -- wire formats ----------------------------------------------------------------------------
def test_openai_wire_format_batches_and_normalises(fake: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> None:
    emb = openai(fake, monkeypatch, batchSize=3)
    assert (emb.provider, emb.model_id, emb.dimension) == ("openai", "openai:text-embedding-3-small", 8)
    texts = [f"def f{i}(): return {i}" for i in range(7)]
    out = emb.embed_documents(texts)
    assert out.dtype == np.float32 and out.shape == (7, 8)
    assert np.allclose(out, unit_rows(texts, 8), atol=1e-5)  # right order despite shuffled `index`
    reqs = fake.requests(OAI)
    assert [len(r.body["input"]) for r in reqs] == [3, 3, 1]
    assert reqs[0].body["model"] == "text-embedding-3-small" and reqs[0].body["dimensions"] == 8
    assert reqs[0].headers["Authorization"] == f"Bearer {KEY}"
    q = emb.embed_query("parse config")
    assert q.shape == (8,) and abs(float(np.linalg.norm(q)) - 1) < 1e-5
    assert emb.embed_documents([]).shape == (0, 8)
    emb.close()


def test_openai_bare_host_gets_v1(fake: FakeProviders) -> None:
    emb = make_http_embedder(settings(provider="openai", baseUrl=fake.url, dimensions=8))
    emb.embed_query("x")
    assert len(fake.requests(OAI)) == 1
    assert "Authorization" not in fake.requests(OAI)[0].headers  # no key configured: none sent
    emb.close()


def test_ollama_wire_format_and_dimension_probe(fake: FakeProviders) -> None:
    emb = make_embedder(settings(provider="ollama", baseUrl=fake.url, model="tiny-embed"))
    # An unknown model: the dimension is probed once with a one-text call.
    assert (emb.model_id, emb.dimension) == ("ollama:tiny-embed", 8)
    assert [r.body["input"] for r in fake.requests(OLLAMA)] == [["dimension probe"]]
    out = emb.embed_documents(["a", "b"])
    assert np.allclose(out, unit_rows(["a", "b"], 8), atol=1e-5)
    assert fake.requests(OLLAMA)[-1].body["model"] == "tiny-embed"
    emb.close()


def test_known_models_need_no_probe(fake: FakeProviders) -> None:
    emb = make_http_embedder(settings(provider="ollama", baseUrl=fake.url, model="nomic-embed-text:latest"))
    assert emb.dimension == 768 and fake.seen == []
    emb.close()
    emb = make_http_embedder(settings(provider="openai", baseUrl=fake.url))
    assert (emb.model_id, emb.dimension) == ("openai:text-embedding-3-small", 1536) and fake.seen == []
    emb.close()


# -- retries ---------------------------------------------------------------------------------
def test_429_honours_retry_after(fake: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps = Sleeps()
    emb = openai(fake, monkeypatch, sleeps)
    fake.script(OAI, Reply(429, {"Retry-After": "3"}), Reply(429, {"Retry-After": "0"}))
    emb.embed_documents(["x"])
    assert sleeps == [3.0, 0.0] and len(fake.requests(OAI)) == 3
    emb.close()


def test_429_without_retry_after_backs_off_exponentially(fake: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps = Sleeps()
    emb = openai(fake, monkeypatch, sleeps)
    fake.script(OAI, *[Reply(429)] * 3)
    emb.embed_documents(["x"])
    assert len(sleeps) == 3 and all(b <= s <= b * 1.1 for s, b in zip(sleeps, [0.5, 1.0, 2.0], strict=True))
    emb.close()


def test_backoff_is_capped(fake: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps = Sleeps()
    emb = openai(fake, monkeypatch, sleeps, retryBaseMs=10_000, retryMaxMs=30_000, maxRetries=3)
    fake.script(OAI, *[Reply(503)] * 3)
    emb.embed_documents(["x"])
    assert 10 <= sleeps[0] <= 11 and 20 <= sleeps[1] <= 22 and sleeps[2] == 30.0
    emb.close()


def test_retry_after_longer_than_the_cap_fails_fast(fake: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps = Sleeps()
    emb = openai(fake, monkeypatch, sleeps)
    fake.script(OAI, Reply(429, {"Retry-After": "3600"}))
    with pytest.raises(EmbeddingError, match="rate limited for 3600s"):
        emb.embed_documents(["x"])
    assert sleeps == []
    emb.close()


def test_5xx_retried_then_embedding_error(fake: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps = Sleeps()
    emb = openai(fake, monkeypatch, sleeps)
    fake.script(OAI, *[Reply(500, body=b'{"error":"boom"}')] * 10)
    with pytest.raises(EmbeddingError, match="failed after 5 attempts: HTTP 500"):
        emb.embed_documents(["x"])
    assert len(fake.requests(OAI)) == 5  # 1 + maxRetries (4)
    assert all(b <= s <= b * 1.1 for s, b in zip(sleeps, [0.5, 1.0, 2.0, 4.0], strict=True))
    emb.close()


def test_queries_get_a_short_retry_budget(fake: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps = Sleeps()
    emb = openai(fake, monkeypatch, sleeps, retryBaseMs=1500)
    fake.script(OAI, *[Reply(502)] * 10)
    with pytest.raises(EmbeddingError, match="after 3 attempts"):
        emb.embed_query("where is the config parsed")
    assert len(sleeps) == 2 and sleeps[0] >= 1.5 and sleeps[1] <= 2.0 * 1.1  # capped at 2 s for queries
    emb.close()


def test_real_retry_timing(fake: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGLS_TEST_OPENAI_KEY", KEY)
    emb = make_http_embedder(
        settings(provider="openai", baseUrl=fake.url, dimensions=8, retryBaseMs=100, apiKeyEnv="RAGLS_TEST_OPENAI_KEY")
    )  # real time.sleep
    fake.script(OAI, Reply(500), Reply(503))
    t0 = time.monotonic()
    emb.embed_documents(["x"])
    at = [r.at for r in fake.requests(OAI)]
    gaps = [b - a for a, b in itertools.pairwise(at)]
    # Lower bounds: the backoff really slept (100 ms, then 200 ms, with jitter below 2x). Upper
    # bounds only catch a backoff of seconds: a loaded machine adds scheduling delay, never less.
    assert len(at) == 3 and 0.1 <= gaps[0] < 1.5 and 0.2 <= gaps[1] < 1.6 and time.monotonic() - t0 < 4
    emb.close()


def test_timeouts_are_retried(fake: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps = Sleeps()
    # The first reply comes after 4 s, the retry's at once: a 1 s timeout is far from both, so a
    # loaded machine (the suites run at once) cannot turn the answered retry into a third try.
    emb = openai(fake, monkeypatch, sleeps, timeoutS=1.0)
    fake.script(OAI, Reply(delay=4.0))
    t0 = time.monotonic()
    out = emb.embed_documents(["slow"])
    assert out.shape == (1, 8) and len(fake.requests(OAI)) == 2 and len(sleeps) == 1
    assert time.monotonic() - t0 < 3.5  # the slow reply was not waited for
    fake.script(OAI, *[Reply(delay=0.4)] * 3)
    emb2 = openai(fake, monkeypatch, sleeps, timeoutS=0.1, maxRetries=2)
    with pytest.raises(EmbeddingError, match="timed out"):
        emb2.embed_documents(["slow"])
    emb.close()
    emb2.close()


def test_connection_refused_is_an_embedding_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps = Sleeps()
    emb = make_http_embedder(
        settings(provider="ollama", baseUrl=f"http://127.0.0.1:{port}", dimensions=8, maxRetries=1), sleep=sleeps
    )
    with pytest.raises(EmbeddingError, match="connection failed"):
        emb.embed_documents(["x"])
    assert len(sleeps) == 1
    emb.close()


def test_other_4xx_fail_fast(fake: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps = Sleeps()
    emb = openai(fake, monkeypatch, sleeps)
    fake.script(OAI, Reply(400, body=b'{"error":{"message":"input too long"}}'))
    with pytest.raises(EmbeddingError, match=r"HTTP 400.*input too long"):
        emb.embed_documents(["x"])
    assert len(fake.requests(OAI)) == 1 and sleeps == []
    emb.close()


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b'{"data": [{"index": 0}]}',
        b'{"data": []}',
        b'{"data": [{"index": 0, "embedding": [1, 2]}]}',
        b'{"data": [{"index": 0, "embedding": [0, 0, 0, 0, 0, 0, 0, 0]}]}',
    ],
)
def test_malformed_responses(fake: FakeProviders, monkeypatch: pytest.MonkeyPatch, body: bytes) -> None:
    emb = openai(fake, monkeypatch)
    fake.script(OAI, Reply(200, body=body))
    with pytest.raises(EmbeddingError, match="malformed"):
        emb.embed_documents(["x"])
    assert len(fake.requests(OAI)) == 1
    emb.close()


def test_401_reacquires_the_key_once(fake: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> None:
    emb = openai(fake, monkeypatch)
    emb.embed_query("warm")  # the key is now cached
    rotated = "sk-rotated-" + "r" * 30
    monkeypatch.setenv("RAGLS_TEST_OPENAI_KEY", rotated)
    fake.script(OAI, Reply(401))
    emb.embed_documents(["x"])
    auth = [r.headers["Authorization"] for r in fake.requests(OAI)]
    assert auth == [f"Bearer {KEY}", f"Bearer {KEY}", f"Bearer {rotated}"]
    # Still 401 after re-acquiring: fail, once, with a hint naming the variable (not its value).
    fake.script(OAI, Reply(401), Reply(401), Reply(401))
    with pytest.raises(EmbeddingError, match=r"HTTP 401.*RAGLS_TEST_OPENAI_KEY") as err:
        emb.embed_documents(["x"])
    assert rotated not in str(err.value) and len(fake.requests(OAI)) == 5
    emb.close()


# -- concurrency -----------------------------------------------------------------------------
def test_concurrency_is_bounded_per_instance(fake: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> None:
    emb = openai(fake, monkeypatch, maxConcurrency=2)
    fake.script(OAI, *[Reply(delay=0.15)] * 6)
    threads = [threading.Thread(target=emb.embed_query, args=(f"q{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(fake.requests(OAI)) == 6 and fake.max_in_flight == 2
    emb.close()


# -- Copilot ---------------------------------------------------------------------------------
def test_copilot_exchanges_the_oauth_token_and_batches_by_50(fake: FakeProviders, tmp_path: Path) -> None:
    emb = copilot(fake, tmp_path, batchSize=512)
    assert (emb.model_id, emb.dimension) == ("copilot:copilot-text-embedding-ada-002", 1536)
    assert fake.seen == []  # nothing is sent before the first embedding
    texts = [f"chunk {i}" for i in range(120)]
    out = emb.embed_documents(texts)
    assert out.shape == (120, 1536) and np.allclose(out, unit_rows(texts, 1536), atol=1e-5)
    assert [len(r.body["input"]) for r in fake.requests(COPILOT)] == [50, 50, 20]
    ex = fake.requests(TOKEN)
    assert len(ex) == 1 and ex[0].method == "GET" and ex[0].headers["Authorization"] == f"token {GHU}"
    r = fake.requests(COPILOT)[0]
    assert r.headers["Authorization"] == "Bearer tid=session-1;exp=1"
    assert r.headers["Copilot-Integration-Id"] == "vscode-chat" and "Editor-Version" in r.headers
    assert r.body["model"] == "copilot-text-embedding-ada-002"
    emb.close()


def test_copilot_refreshes_five_minutes_before_expiry(fake: FakeProviders, tmp_path: Path) -> None:
    now = [1_000_000.0]
    fake.token_ttl = 3600
    emb = copilot(fake, tmp_path, clock=lambda: now[0])
    real = time.time()
    emb.embed_query("a")
    emb.embed_query("b")
    assert len(fake.requests(TOKEN)) == 1  # cached
    now[0] = real + 3600 - 299  # inside the 5-minute margin
    emb.embed_query("c")
    assert len(fake.requests(TOKEN)) == 2
    auth = [r.headers["Authorization"] for r in fake.requests(COPILOT)]
    assert auth[-1] == "Bearer tid=session-2;exp=1"
    emb.close()


def test_copilot_token_expired_in_the_past_is_refreshed(fake: FakeProviders, tmp_path: Path) -> None:
    fake.token_ttl = -60  # GitHub hands out an already-expired token: exchange before each use
    emb = copilot(fake, tmp_path)
    emb.embed_query("a")
    emb.embed_query("b")
    assert len(fake.requests(TOKEN)) == 2
    emb.close()


def test_copilot_401_drops_the_session_and_retries_once(fake: FakeProviders, tmp_path: Path) -> None:
    emb = copilot(fake, tmp_path)
    emb.embed_query("a")
    fake.script(COPILOT, Reply(401))
    emb.embed_query("b")
    assert len(fake.requests(TOKEN)) == 2
    assert [r.headers["Authorization"] for r in fake.requests(COPILOT)][-2:] == [
        "Bearer tid=session-1;exp=1",
        "Bearer tid=session-2;exp=1",
    ]
    emb.close()


def test_copilot_exchange_refused(fake: FakeProviders, tmp_path: Path) -> None:
    emb = copilot(fake, tmp_path)
    fake.script(TOKEN, Reply(403, body=b'{"message":"Resource not accessible by integration"}'))
    with pytest.raises(EmbeddingError, match=r"403.*Copilot enabled") as err:
        emb.embed_query("a")
    assert GHU not in str(err.value)
    assert fake.requests(COPILOT) == []
    emb.close()


def test_copilot_reads_hosts_json_and_reports_missing_sign_in(
    fake: FakeProviders, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tmp_path / "cfg" / "github-copilot"
    cfg.mkdir(parents=True)
    (cfg / "hosts.json").write_text(json.dumps({"github.com": {"user": "dev", "oauth_token": GHU}}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.delenv("RAGLS_COPILOT_TOKEN_FILE", raising=False)
    fake.dim, fake.token_api = 1536, fake.url
    emb = make_http_embedder(settings(provider="copilot", authUrl=fake.url), sleep=Sleeps())
    emb.embed_query("a")
    assert fake.requests(TOKEN)[0].headers["Authorization"] == f"token {GHU}"
    emb.close()
    (cfg / "hosts.json").unlink()
    emb = make_http_embedder(settings(provider="copilot", authUrl=fake.url), sleep=Sleeps())
    with pytest.raises(EmbeddingError, match=r"no GitHub Copilot sign-in found.*apps\.json"):
        emb.embed_query("a")
    emb.close()


def test_copilot_honours_the_proxy_setting(fake: FakeProviders, tmp_path: Path) -> None:
    # Unresolvable hosts: only a proxy can answer for them.
    emb = copilot(fake, tmp_path, proxy=fake.url, authUrl="http://github.invalid", baseUrl="http://copilot.invalid")
    emb.embed_documents(["via proxy"])
    assert [s.via_proxy for s in fake.seen] == [True, True]
    assert [s.path for s in fake.seen] == [TOKEN, COPILOT]
    emb.close()


# -- secrets ---------------------------------------------------------------------------------
def test_secret_lines_never_leave(
    fake: FakeProviders, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    text = f"def connect():\n    {GHP_LINE}\n    return client(token)"
    emb = openai(fake, monkeypatch)
    emb.embed_documents([text, "plain"])
    emb.embed_query(f"why does {GHP_LINE} fail")
    emb.close()
    cop = copilot(fake, tmp_path)
    cop.embed_documents([text])
    cop.close()
    sent = json.dumps([s.body for s in fake.seen])
    assert "ghp_" not in sent and "def connect():" in sent and "return client(token)" in sent
    assert "REDACTED" in sent


def test_keys_and_tokens_are_masked_in_errors_and_logs(
    fake: FakeProviders, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    emb = openai(fake, monkeypatch)
    # A server that echoes the credential back in its errors.
    echo = json.dumps({"error": f"bad key {KEY}"}).encode()
    fake.script(OAI, Reply(500, body=echo), Reply(400, body=echo))
    with pytest.raises(EmbeddingError) as err:
        emb.embed_documents(["x"])
    assert KEY not in str(err.value) and "***" in str(err.value)
    assert KEY not in repr(emb.__dict__)
    emb.close()
    cop = copilot(fake, tmp_path)
    cop.embed_query("warm")
    fake.script(COPILOT, Reply(400, body=f"token tid=session-1;exp=1 and {GHU}".encode()))
    with pytest.raises(EmbeddingError) as err:
        cop.embed_query("x")
    assert "session-1" not in str(err.value) and GHU not in str(err.value)
    assert GHU not in repr(cop.__dict__) and "session-1" not in repr(cop.__dict__)
    cop.close()
    logs = "\n".join(r.getMessage() for r in caplog.records)
    assert logs and KEY not in logs and GHU not in logs and "session-1" not in logs


def test_retry_after_parsing() -> None:
    assert retry_after_s("7") == 7.0
    assert retry_after_s(None) is None and retry_after_s("soon") is None
    assert retry_after_s("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: no wait


# -- through the indexer ---------------------------------------------------------------------
def test_indexer_embeds_over_http_and_sends_no_secrets(fake: FakeProviders, tmp_path: Path) -> None:
    from ragls.config import load_settings
    from ragls.index.worker import Indexer

    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "client.py").write_text(
        f"def connect(host):\n    {GHP_LINE}\n    return open_session(host, retries=3)\n\n\n"
        "def open_session(host, retries):\n    return (host, retries)\n"
    )
    (ws / "README.md").write_text("# Demo\n\nConnects to the billing service and retries.\n")
    s = load_settings(
        ws,
        (
            "test",
            {
                "cacheDir": str(tmp_path / "cache"),
                "indexing": {"watch": False},
                "embedder": {"provider": "ollama", "baseUrl": fake.url, "model": "tiny", "dimensions": 8},
            },
        ),
    )
    idx = Indexer(ws, s)
    idx.start()
    try:
        assert idx.handle.ready.wait(20) and idx.handle.fatal is None
        deadline = time.monotonic() + 20
        while idx.busy() and time.monotonic() < deadline:
            time.sleep(0.05)
        snap = idx.snapshot()
        assert snap.state == "ready" and snap.files_indexed == 2 and snap.chunks >= 2
        assert idx.handle.embedder is not None and idx.handle.embedder.model_id == "ollama:tiny"
    finally:
        idx.stop()
    sent = json.dumps([r.body for r in fake.requests(OLLAMA)])
    assert "open_session" in sent and "ghp_" not in sent
