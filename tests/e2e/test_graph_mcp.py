"""The code graph's MCP tools (find_references, related, repo_map) from the official SDK's client,
against an editor's language server on the same folder: the agent's process is a client of the
editor's index (the owner socket carries the graph methods), and every tool's structuredContent
is exactly the LSP method's result."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from ragls.protocol import ReferencesResult, RelatedResult, RepoMapResult
from tests.e2e.test_mcp import call, mcp_session, text_of, wait_ready
from tests.lsp_harness import Starter

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "graph"


@pytest.fixture
def graph_ws(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURE, tmp_path / "graph"))


def _properties(schema: dict[str, Any] | None) -> set[str]:
    assert schema is not None
    return set(schema["properties"])


async def test_graph_tools_answer_as_the_lsp_methods(start: Starter, graph_ws: Path, tmp_path: Path) -> None:
    cache = tmp_path / "xdg"
    editor = await start(graph_ws, env={"RAGLS_CACHE_DIR": "", "XDG_CACHE_HOME": str(cache)})
    await editor.wait_ready()
    async with mcp_session(graph_ws, cache) as agent:
        await wait_ready(agent)
        assert "another ragls process on this folder" in text_of(await call(agent, "index_status", {}))
        tools = {t.name: t for t in (await agent.list_tools()).tools}
        for name, result in (
            ("find_references", ReferencesResult),
            ("related", RelatedResult),
            ("repo_map", RepoMapResult),
        ):
            assert _properties(tools[name].output_schema) == set(result.model_json_schema(by_alias=True)["properties"])
            assert tools[name].annotations is not None and tools[name].annotations.read_only_hint

        cases: list[tuple[str, dict[str, Any], str, dict[str, Any], list[str]]] = [
            (
                "find_references",
                {"symbol": "tax_rate"},
                "rag/references",
                {"symbol": "tax_rate"},
                ["2 uses of 'tax_rate':", "shop/cart.py:14 call in Cart.total"],
            ),
            (
                "find_references",
                {"symbol": "render", "path": "shop/pricing.py", "limit": 10},
                "rag/references",
                {"symbol": "render", "path": "shop/pricing.py", "limit": 10},
                ["shop/checkout.py:11 call in checkout"],
            ),
            (
                "related",
                {"symbol": "render", "path": "shop/checkout.py"},
                "rag/related",
                {"symbol": "render", "path": "shop/checkout.py"},
                [
                    "Definition: render (shop/pricing.py:8); render (admin/report.py:4); render (tools/fmt.py:4)",
                    "Callers: checkout (shop/checkout.py:11)",
                ],
            ),
            (
                "related",
                {"path": "services/geo/distance.go"},
                "rag/related",
                {"path": "services/geo/distance.go"},
                ["Imported by: example.com/shop/services/geo (services/api/handler.go:6)"],
            ),
            (
                "repo_map",
                {"query": "rate limiter", "max_tokens": 300},
                "rag/repoMap",
                {"query": "rate limiter", "maxTokens": 300},
                ["java/src/main/java/com/acme/RateLimiter.java:\n  5: public class RateLimiter {"],
            ),
        ]
        for tool, args, method, params, words in cases:
            res = await call(agent, tool, args)
            assert not res.is_error, text_of(res)
            assert res.structured_content == await editor.request(method, params), (tool, args)
            for w in words:
                assert w in text_of(res), (tool, text_of(res))

        # Bad arguments: a tool error naming them; the server goes on.
        res = await call(agent, "related", {})
        assert res.is_error and "symbol or path" in text_of(res)
        res = await call(agent, "find_references", {"symbol": "x", "limit": 0})
        assert res.is_error and "limit" in text_of(res)
        res = await call(agent, "find_references", {"symbol": "x", "path": "/etc/passwd"})
        assert res.is_error and "path" in text_of(res)
        res = await call(agent, "find_references", {"symbol": "nowhere_defined"})
        assert not res.is_error and "No uses of 'nowhere_defined' found." in text_of(res)


async def test_graph_tools_over_several_folders_one_of_them_shared(
    start: Starter, graph_ws: Path, tmp_path: Path
) -> None:
    """An agent on two folders, one of them an editor's (its index reached through the owner
    socket), the other indexed by the agent's own process: each location names its folder, and
    a path naming a folder asks that folder only."""
    store = tmp_path / "store"
    shutil.copytree(graph_ws / "shop", store / "shop")
    shutil.copytree(graph_ws / "admin", store / "admin")
    web = Path(shutil.copytree(graph_ws / "web", tmp_path / "web"))
    cache = tmp_path / "xdg"
    editor = await start(store, env={"RAGLS_CACHE_DIR": "", "XDG_CACHE_HOME": str(cache)})
    await editor.wait_ready()
    async with mcp_session([store, web], cache) as agent:
        await wait_ready(agent)
        res = await call(agent, "find_references", {"symbol": "distanceKm"})
        assert not res.is_error, text_of(res)
        assert {(loc["folder"], loc["path"], loc["line"]) for loc in res.structured_content["locations"]} == {
            ("web", "src/app.ts", 1),
            ("web", "src/app.ts", 6),
        }
        res = await call(agent, "find_references", {"symbol": "render", "path": "store/shop/pricing.py"})
        assert not res.is_error, text_of(res)
        assert {(loc["folder"], loc["path"], loc["line"]) for loc in res.structured_content["locations"]} == {
            ("store", "shop/checkout.py", 4),
            ("store", "shop/checkout.py", 11),
        }
        # The editor's own answer is the same places (its folder is the shared index).
        own = await editor.request("rag/references", {"symbol": "render", "path": "shop/pricing.py"})
        assert {(loc["path"], loc["line"]) for loc in own["locations"]} == {
            ("shop/checkout.py", 4),
            ("shop/checkout.py", 11),
        }
        mapped = await call(agent, "repo_map", {"max_tokens": 500})
        assert not mapped.is_error and {f["folder"] for f in mapped.structured_content["files"]} == {"store", "web"}
