"""No planted secret leaves the index (issue 37, finding 3): a workspace of 100+ realistic
secrets (tests/secret_corpus.py) behind the real server over LSP with a remote embedder the
user configured (a fake OpenAI-compatible one on 127.0.0.1), and behind `ragls mcp` over the
MCP SDK's stdio client. Nothing planted may appear in a `rag/retrieve` chunk, the
`<rag_context>`, a `search_code` answer, an embedding request or the index on disk; the
files' other lines must."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as mt
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.lsp_harness import Starter
from tests.secret_corpus import REDACTED, SECRET_CONTENT, SECRET_FILE, Corpus, build
from tests.unit.fake_providers import FakeProviders

TOKEN_VAR = "RAGLS_TEST_EMBEDDER_TOKEN"
# Questions near every planted file: each file's marker, and words of its secrets' names.
QUESTIONS = [
    "AWS secret access key",
    "JWT signing secret",
    "database password postgres",
    "github token gitlab token",
    "stripe slack twilio sendgrid keys",
    "openai anthropic api key",
    "private key pem",
    "kubeconfig token client-key-data",
    "authorization bearer header",
    "redis cache url",
    "npm pypi publish token",
    "azure storage account key",
    "smtp password mail",
    "docker compose environment password",
    "helm values api key client secret",
    "deploy key openssh",
    "wordpress database password",
    "maven deploy server password",
    "legacy app settings payments api key smtp",
    "nightly backup mysqldump upload archive",
    "reports http client authorization headers dsn",
    "github issues authorization token",
    "order store database config",
    "jdbc datasource properties",
    "hugging face hub upload vault discord webhook",
]


@pytest.fixture
def listener() -> Iterator[FakeProviders]:
    with FakeProviders(dim=8) as f:
        yield f


def _plant(tmp_path: Path) -> tuple[Corpus, Path]:
    corpus = build()
    ws = tmp_path / "secrets-ws"
    corpus.write(ws)
    return corpus, ws


def _squeezed(text: str) -> str:
    # The dense model's input splits camelCase with spaces (chunking.model.split_humps): a
    # leaked token would be cut into words, so compare without any whitespace.
    return "".join(text.split())


def _check_markers(corpus: Corpus, seen: str) -> None:
    for f in corpus.files:
        if f.outcome == REDACTED:
            assert f.marker in seen, f"{f.path} was not indexed at all: the test would prove nothing"
        else:
            assert f.marker not in seen, f"{f.path} should not be indexed ({f.outcome})"


@pytest.mark.slow
async def test_no_planted_secret_reaches_results_context_or_the_embedder(
    start: Starter, tmp_path: Path, listener: FakeProviders
) -> None:
    corpus, ws = _plant(tmp_path)
    cache = tmp_path / "cache"
    init = {
        "indexing": {"debounceMs": 50},
        "embedder": {
            "provider": "openai",
            "baseUrl": listener.url + "/v1",
            "apiKeyEnv": TOKEN_VAR,
            "model": "fake-embedder",
            "dimensions": 8,
            "maxRetries": 0,
        },
    }
    s = await start(root=ws, init=init, env={TOKEN_VAR: uuid.uuid4().hex, "RAGLS_CACHE_DIR": str(cache)})
    st = await s.wait_ready()
    assert st["embedder"]["provider"] == "openai"
    by_reason = st["skippedByReason"]
    assert by_reason.get(SECRET_CONTENT) == sum(f.outcome == SECRET_CONTENT for f in corpus.files), by_reason
    assert by_reason.get("secret", 0) >= 1, by_reason  # config/secret.yaml (.kube/ is hidden anyway)

    seen = ""
    for q in [f.marker for f in corpus.files] + QUESTIONS:
        res = await s.retrieve(q, topK=50, maxChars=200_000)
        assert res["chunks"], q
        seen += res["context"] + "".join(c["content"] for c in res["chunks"])
    _check_markers(corpus, seen)
    assert "[REDACTED" in seen
    assert corpus.leaks(seen) == []

    requests = listener.requests("/v1/embeddings")
    assert requests, "the remote embedder was never asked"
    sent = _squeezed(json.dumps([r.body for r in requests]))
    assert "settings_loader_marker" in sent and "orders_compose_marker" in sent
    assert corpus.leaks(sent) == []

    # The store on disk (Qdrant payloads, the embedding cache, the manifest) holds none either.
    blob = b"".join(p.read_bytes() for p in cache.rglob("*") if p.is_file() and p.stat().st_size < 50_000_000)
    # Store files are mostly preallocated zeros; no secret holds a NUL, so runs of them can go
    # before the substring search (which would otherwise scan megabytes of zeros per piece).
    stored = re.sub(rb"\x00+", b"\x00", blob).decode("latin-1")
    assert "settings_loader_marker" in stored
    assert corpus.leaks(stored) == []


def _mcp_env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAGLS_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(cache)  # its own index, socket and embeddings
    return env


async def _call(session: ClientSession, tool: str, args: dict[str, Any]) -> mt.CallToolResult:
    return await asyncio.wait_for(session.call_tool(tool, args), 120)


async def test_no_planted_secret_reaches_mcp_search_code(tmp_path: Path) -> None:
    corpus, ws = _plant(tmp_path)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ragls", "mcp", str(ws)], env=_mcp_env(tmp_path / "xdg"), cwd=str(ws)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        deadline = time.monotonic() + 120
        while True:
            st = (await _call(session, "index_status", {})).structured_content
            assert st is not None and st["state"] != "error", st
            if st["state"] == "ready":
                break
            assert time.monotonic() < deadline, st
            await asyncio.sleep(0.2)
        assert st["skippedByReason"].get(SECRET_CONTENT) == 2, st

        text, found = "", ""
        for q in [f.marker for f in corpus.files] + QUESTIONS:
            res = await _call(session, "search_code", {"query": q, "top_k": 20})
            assert not res.is_error and res.content and isinstance(res.content[0], mt.TextContent), res
            assert res.structured_content is not None
            text += res.content[0].text
            found += res.structured_content["context"] + "".join(c["content"] for c in res.structured_content["chunks"])
    _check_markers(corpus, found)  # (the text answer repeats the query, a marker included)
    assert "[REDACTED" in found
    assert corpus.leaks(text) == [] and corpus.leaks(found) == []
    assert sum(f.outcome == SECRET_FILE for f in corpus.files) == 2
