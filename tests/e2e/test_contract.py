"""One contract (issue 17): the CLI prints exactly the LSP payloads (`ragls index` and
`search --status` = rag/indexStatus, `search --json` = rag/retrieve), the protocol version is
reported, and a degraded answer (embedding provider down) is results plus `warnings`, never
`error`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

from ragls.frontends.lsp.server import to_plain
from ragls.protocol import PROTOCOL_VERSION, IndexStatus, RetrieveResultOut
from tests.lsp_harness import Starter
from tests.unit.fake_providers import FakeProviders, Reply

QUERY = "invoice compute_total"


def cli(*args: str, cache: Path, **env: str) -> tuple[int, Any, str]:
    p = subprocess.run(
        [sys.executable, "-m", "ragls", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "RAGLS_CACHE_DIR": str(cache), **env},
    )
    return p.returncode, p.stdout, p.stderr


def shape(value: Any) -> Any:
    """Keys and JSON types, recursively: what a client parsing the payload depends on."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items() if k != "skippedByReason"}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return "number" if isinstance(value, int | float) and not isinstance(value, bool) else type(value).__name__


def chunk_keys(res: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(c["path"], json.dumps(c["range"]), c["symbol"], c["kind"], c["content"]) for c in res["chunks"]]


@pytest.mark.slow
async def test_cli_json_is_the_lsp_payload(start: Starter, workspace: Path, cache_dir: Path) -> None:
    rc, out, err = cli("index", str(workspace), "-q", cache=cache_dir)
    assert rc == 0, err
    st_cli = json.loads(out)
    IndexStatus.model_validate(st_cli)  # the wire model forbids unknown keys
    # `ragls status` reads the same shape from disk, without indexing.
    rc, out, err = cli("status", str(workspace), cache=cache_dir)
    assert rc == 0, err
    st_disk = IndexStatus.model_validate(json.loads(out))
    assert (st_disk.state, st_disk.files_indexed, st_disk.chunks) == ("ready", st_cli["filesIndexed"], st_cli["chunks"])
    assert st_disk.embedder.model == st_cli["embedder"]["model"] and "no server is running" in (st_disk.message or "")
    rc, out, _ = cli("status", str(workspace.parent), cache=cache_dir)
    assert rc == 1 and "not indexed yet" in IndexStatus.model_validate(json.loads(out)).message
    # Several folders: one workspace status, as an editor with both open would show it.
    other = workspace.parent / "never-indexed"
    other.mkdir()
    (other / "x.py").write_text("def x():\n    return 1\n")
    rc, out, _ = cli("status", str(workspace), str(other), cache=cache_dir)
    both = IndexStatus.model_validate(json.loads(out))
    assert rc == 1 and [f.name for f in both.folders] == [workspace.name, "never-indexed"]
    assert both.chunks == st_cli["chunks"] and "never-indexed: " in (both.message or ""), both.message
    rc, out, err = cli("search", str(workspace), QUERY, "-k", "3", "--json", "--status", "-q", cache=cache_dir)
    assert rc == 0, err
    decoder = json.JSONDecoder()
    st_cli2, end = decoder.raw_decode(out)
    res_cli = json.loads(out[end:])
    RetrieveResultOut.model_validate(res_cli)
    assert res_cli["error"] is None and res_cli["warnings"] == [] and res_cli["chunks"]

    s = await start()
    st_lsp = await s.wait_ready()
    res_lsp = await s.retrieve(QUERY, topK=3)
    # A server owns the folder now: `ragls status` asks it (its live status), not the disk.
    rc, out, err = cli("status", str(workspace), cache=cache_dir)
    live = IndexStatus.model_validate(json.loads(out))
    assert rc == 0 and live.state == "ready" and live.chunks == st_lsp["chunks"], err
    assert "no server is running" not in (live.message or ""), live.message
    for cli_st in (st_cli, st_cli2):
        assert cli_st["protocolVersion"] == st_lsp["protocolVersion"] == PROTOCOL_VERSION
        assert shape(cli_st) == shape(st_lsp) | {"errors": shape(cli_st["errors"])}
        for key in ("state", "phase", "filesTotal", "filesIndexed", "filesFailed", "chunks", "workspace", "embedder"):
            assert cli_st[key] == st_lsp[key], key
    assert shape(res_cli) == shape(res_lsp)
    assert chunk_keys(res_cli) == chunk_keys(res_lsp)


async def test_initialize_reports_the_protocol_version(workspace: Path, cache_dir: Path) -> None:
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "ragls"], server_env={**os.environ, "RAGLS_CACHE_DIR": str(cache_dir)}
    )
    client = await config.start()
    try:
        result = await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("neovim"),
                root_uri=workspace.as_uri(),
                initialization_options={"indexing": {"autoIndex": False}},
            )
        )
        assert to_plain(result.capabilities.experimental) == {"ragls": {"protocolVersion": PROTOCOL_VERSION}}
        # Multi-root: the server takes workspace folder changes (docs/protocol.md).
        folders = result.capabilities.workspace.workspace_folders  # type: ignore[union-attr]
        assert folders is not None and folders.supported and folders.change_notifications
    finally:
        await client.shutdown_session()
        await client.stop()


@pytest.mark.slow
async def test_provider_down_gives_results_with_a_warning(start: Starter, fresh_cache: Path, workspace: Path) -> None:
    """An HTTP provider on 127.0.0.1 that answers 500: the index is lexical only, and both the
    LSP and the CLI answer with results plus a warning, `error` null, a version-1 client that
    reads only `context`/`chunks` still gets them."""
    with FakeProviders(dim=8) as fake:
        fake.script("/api/embed", *[Reply(status=500)] * 2000)
        embedder = {
            "provider": "ollama",
            "baseUrl": fake.url,
            "model": "tiny",
            "dimensions": 8,
            "maxRetries": 0,
            "timeoutS": 2,
        }
        s = await start(env={"RAGLS_CACHE_DIR": str(fresh_cache)}, init={"embedder": embedder})
        await s.eventually(lambda: _lexical_done(s), 90)
        res = await s.retrieve(QUERY, topK=3)
        assert res["error"] is None, res
        assert res["chunks"] and res["chunks"][0]["path"] == "billing/invoice.py"
        assert "<rag_context>" in res["context"]
        assert res["warnings"] and all("lexical only" in w for w in res["warnings"]), res
        await s.close()
        config = fresh_cache / "user.toml"
        config.write_text(
            "[embedder]\n"
            + "".join(f"{k} = {json.dumps(v)}\n" for k, v in embedder.items() if k != "baseUrl")
            + f"base_url = {json.dumps(fake.url)}\n"
        )
        rc, out, err = cli(
            "search", str(workspace), QUERY, "-k", "3", "--json", "-q", cache=fresh_cache, RAGLS_CONFIG=str(config)
        )
        assert rc == 0, err
        res_cli = json.loads(out)
        assert res_cli["error"] is None and res_cli["chunks"] and res_cli["warnings"], res_cli
        assert chunk_keys(res_cli)[0][0] == "billing/invoice.py"


async def _lexical_done(s: Any) -> bool:
    st = await s.status()
    return st["filesTotal"] > 0 and st["lexical"]["done"] >= st["filesTotal"] - st["filesFailed"]
