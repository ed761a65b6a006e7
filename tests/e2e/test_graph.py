"""The code graph over the real server (LSP): rag/references, rag/related and rag/repoMap on real
files in Python, TypeScript, Go, Java, Rust and C; an ambiguous name's ranked candidates; a
saved file's edges within seconds; a multi-root workspace; hostile files bounded."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from ragls.config import Settings
from ragls.graph.relations import references_of
from ragls.index.handle import manifest_of
from ragls.protocol import ReferencesResult, RelatedResult, RepoMapResult
from tests.lsp_harness import Session, Starter

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "graph"


@pytest.fixture
def graph_ws(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURE, tmp_path / "graph"))


async def refs(s: Session, symbol: str, **kw: Any) -> set[tuple[str, int, str | None, str]]:
    res = await s.request("rag/references", {"symbol": symbol, **kw})
    ReferencesResult.model_validate(res)
    return {(loc["path"], loc["line"], loc["symbol"], loc["kind"]) for loc in res["locations"]}


async def lexical(s: Session, timeout: float) -> None:
    """Every file through the keyword pass (its graph rows with it)."""

    async def done() -> bool:
        st = await s.status()
        return st["filesTotal"] > 0 and st["lexical"]["done"] >= st["filesTotal"] and st["phase"] in ("dense", "idle")

    await s.eventually(done, timeout)


async def related(s: Session, **kw: Any) -> dict[str, Any]:
    res = await s.request("rag/related", kw)
    RelatedResult.model_validate(res)
    return res  # type: ignore[no-any-return]


async def test_references_related_and_repo_map(start: Starter, graph_ws: Path) -> None:
    s = await start(graph_ws)
    await s.wait_ready()

    # One use at least per language, each with the definition holding it.
    assert await refs(s, "tax_rate") == {
        ("shop/cart.py", 3, None, "import"),
        ("shop/cart.py", 14, "Cart.total", "call"),
    }
    assert await refs(s, "Cart.total") == {("shop/checkout.py", 11, "checkout", "call")}
    assert await refs(s, "distanceKm") == {
        ("web/src/app.ts", 1, None, "import"),
        ("web/src/app.ts", 6, "nearest", "call"),
    }
    assert await refs(s, "HaversineKm") == {("services/api/handler.go", 11, "Handle", "call")}
    java = "java/src/main/java/com/acme/"
    assert await refs(s, "RateLimiter.tryAcquire") == {(java + "Gateway.java", 7, "Gateway.handle", "call")}
    assert (java + "Gateway.java", 4, "Gateway", "call") in await refs(s, "RateLimiter")
    assert ("native/src/main.rs", 7, "main", "call") in await refs(s, "RingBuffer.push")
    assert await refs(s, "with_capacity") == {("native/src/main.rs", 6, "main", "call")}
    assert await refs(s, "ring_push") == {("native/c/main.c", 6, "main", "call")}

    # An ambiguous name: its candidates ranked as seen from a file; each definition's own uses.
    from_checkout = await related(s, symbol="render", path="shop/checkout.py")
    assert [d["path"] for d in from_checkout["definition"]] == ["shop/pricing.py", "admin/report.py", "tools/fmt.py"]
    assert any("3 definitions" in w for w in from_checkout["warnings"])
    from_admin = await related(s, symbol="render", path="admin/report.py")
    assert from_admin["definition"][0]["path"] == "admin/report.py"
    assert await refs(s, "render", path="shop/pricing.py") == {
        ("shop/checkout.py", 4, None, "import"),
        ("shop/checkout.py", 11, "checkout", "call"),
    }
    assert await refs(s, "render", path="admin/report.py") == {("admin/report.py", 9, "report", "call")}
    assert len(await refs(s, "render")) == 3

    # Callers, callees, imports, importers.
    checkout = await related(s, symbol="checkout")
    assert {(c["symbol"], c["path"]) for c in checkout["callees"]} == {
        ("Cart", "shop/cart.py"),
        ("Cart.add", "shop/cart.py"),
        ("Cart.total", "shop/cart.py"),
        ("render", "shop/pricing.py"),
    }
    pricing = await related(s, path="shop/pricing.py")
    assert [d["symbol"] for d in pricing["definition"]] == ["tax_rate", "render"]
    assert {(c["path"], c["symbol"]) for c in pricing["callers"]} == {
        ("shop/cart.py", "Cart.total"),
        ("shop/checkout.py", "checkout"),
    }
    assert {i["path"] for i in pricing["importedBy"]} == {"shop/cart.py", "shop/checkout.py"}
    limiter = await related(s, symbol="tryAcquire")
    assert [(c["symbol"], c["path"]) for c in limiter["callees"]] == [("Clock.now", java + "util/Clock.java")]
    assert [i["path"] for i in limiter["imports"]] == [java + "util/Clock.java"]

    # The map: within its budget, the most used files first; a question moves its files up.
    plain = RepoMapResult.model_validate(await s.request("rag/repoMap", {"maxTokens": 400}))
    assert 0 < plain.tokens <= 400 and plain.files and plain.text.startswith(plain.files[0].path + ":\n")
    assert all(f.score > 0 for f in plain.files) and [f.score for f in plain.files] == sorted(
        (f.score for f in plain.files), reverse=True
    )
    assert "def tax_rate(region: str) -> float:" in plain.text
    asked = RepoMapResult.model_validate(
        await s.request("rag/repoMap", {"query": "rate limiter tryAcquire", "maxTokens": 200})
    )
    assert asked.files[0].path == java + "RateLimiter.java", asked.text
    assert asked.tokens <= 200

    # The caller's mistakes are invalid params, named.
    for method, params, field in [
        ("rag/references", {"symbol": " "}, "symbol"),
        ("rag/references", {"symbol": "x", "path": "../etc/passwd"}, "path"),
        ("rag/related", {}, "symbol or path"),
        ("rag/repoMap", {"maxTokens": 10}, "maxTokens"),
    ]:
        with pytest.raises(JsonRpcException) as err:
            await s.request(method, params)
        assert err.value.code == -32602 and field in str(err.value), (method, err.value)


async def test_a_saved_file_changes_its_edges_within_seconds(start: Starter, graph_ws: Path) -> None:
    s = await start(graph_ws)
    await s.wait_ready()
    assert len(await refs(s, "render", path="shop/pricing.py")) == 2

    # A new file calling tax_rate, and checkout no longer calling render.
    (graph_ws / "shop" / "refund.py").write_text(
        "from shop.pricing import tax_rate\n\n\ndef refund(amount: float) -> float:\n"
        '    return amount * (1 + tax_rate("EU"))\n'
    )
    checkout = graph_ws / "shop" / "checkout.py"
    checkout.write_text(checkout.read_text().replace("return render(cart.total())", "return str(cart.total())"))
    t0 = time.monotonic()

    async def updated() -> bool:
        uses = await refs(s, "tax_rate")
        left = await refs(s, "render", path="shop/pricing.py")
        return ("shop/refund.py", 5, "refund", "call") in uses and left == {("shop/checkout.py", 4, None, "import")}

    await s.eventually(updated, timeout=15)
    took = time.monotonic() - t0
    assert took < 10, took
    assert ("shop/refund.py", 1, None, "import") in await refs(s, "tax_rate")
    # The other files' edges are untouched.
    assert await refs(s, "Cart.total") == {("shop/checkout.py", 11, "checkout", "call")}

    # A deleted file's edges go with it.
    (graph_ws / "shop" / "refund.py").unlink()

    async def gone() -> bool:
        return not any(p == "shop/refund.py" for p, *_ in await refs(s, "tax_rate"))

    await s.eventually(gone, timeout=15)


async def test_the_context_adds_the_signatures_of_callees_and_callers(start: Starter, graph_ws: Path) -> None:
    """After the chunks, budget permitting, `<rag_context>` shows what the first hits call and
    what calls them: their signatures only, marked `relation` and `of`; never in place of a
    chunk (docs/protocol.md)."""
    s = await start(graph_ws)
    await s.wait_ready()
    ask = {"query": "the cart's total with tax", "paths": ["shop/cart.py"], "topK": 5}
    res = await s.request("rag/retrieve", {**ask, "maxChars": 4000})
    assert "Cart" in [c["symbol"] for c in res["chunks"]], res["context"]
    context = res["context"]
    calls = (
        '<code_context file="shop/pricing.py" lines="4-4" symbol="tax_rate" relation="calls" of="Cart">\n'
        "def tax_rate(region: str) -> float:\n</code_context>\n"
    )
    called = '<code_context file="shop/checkout.py" lines="7-7" symbol="checkout" relation="called-by" of="Cart">'
    assert calls in context and called in context, context
    assert context.count("def checkout(") == 1  # once, however many hits it calls
    chunks = context[: context.rindex("<code_context", 0, context.index(' relation="'))]
    assert chunks.count("<code_context") == len(res["chunks"])  # every chunk first
    assert "return render(" not in context  # signatures, not bodies

    # No room left after the chunks: the chunks alone, as before.
    plain = chunks + "</rag_context>"
    tight = await s.request("rag/retrieve", {**ask, "maxChars": len(plain) + 10})
    assert "relation=" not in tight["context"] and tight["context"].count("<code_context") == len(res["chunks"])


async def test_multi_root_locations_carry_their_folder(start: Starter, graph_ws: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(graph_ws / "shop", store / "shop")
    shutil.copytree(graph_ws / "admin", store / "admin")
    web = Path(shutil.copytree(graph_ws / "web", tmp_path / "web"))
    s = await start(folders=[store, web])
    await s.wait_ready()

    res = await s.request("rag/references", {"symbol": "distanceKm"})
    assert {(loc["folder"], loc["folderUri"], loc["path"], loc["line"]) for loc in res["locations"]} == {
        ("web", web.as_uri(), "src/app.ts", 1),
        ("web", web.as_uri(), "src/app.ts", 6),
    }
    res = await s.request("rag/references", {"symbol": "render", "path": "store/shop/pricing.py"})
    assert {(loc["folder"], loc["path"], loc["line"]) for loc in res["locations"]} == {
        ("store", "shop/checkout.py", 4),
        ("store", "shop/checkout.py", 11),
    }
    rel = await related(s, symbol="nearest")
    assert [(d["folder"], d["path"]) for d in rel["definition"]] == [("web", "src/app.ts")]
    assert {(c["folder"], c["symbol"]) for c in rel["callees"]} >= {("web", "distanceKm")}
    ask = {"query": "the cart's total with tax", "paths": ["store/shop/cart.py"], "topK": 1}
    res = await s.request("rag/retrieve", ask)
    assert 'file="store/shop/pricing.py" lines="4-4" symbol="tax_rate" relation="calls"' in res["context"]

    both = RepoMapResult.model_validate(await s.request("rag/repoMap", {"maxTokens": 500}))
    assert {f.folder for f in both.files} == {"store", "web"}
    assert "web/src/geo.ts:" in both.text and "store/shop/pricing.py:" in both.text
    assert both.tokens <= 500


async def test_hostile_files_stay_bounded(start: Starter, tmp_path: Path) -> None:
    ws = tmp_path / "hostile"
    ws.mkdir()
    (ws / "calls.py").write_text("def target():\n    return 1\n\n" + "target()\n" * 100_000)
    depth = 2_000
    (ws / "deep.js").write_text(
        "".join(f"function level{i}() {{\n" for i in range(depth)) + "target();\n" + "}\n" * depth
    )
    (ws / "main.py").write_text("from calls import target\n\n\ndef main():\n    return target()\n")
    s = await start(ws)
    await lexical(s, timeout=120)  # the graph comes with the keyword pass; embeddings may go on

    # 100k calls of one name: the file keeps the first 1,000 lines; an answer its limit, and says so.
    res = await s.request("rag/references", {"symbol": "target", "limit": 50})
    assert [loc["line"] for loc in res["locations"]] == list(range(4, 54))
    assert any("the first 50" in w for w in res["warnings"]), res["warnings"]
    res = await s.request("rag/references", {"symbol": "target", "limit": 2000})
    by_file = {p: sum(1 for loc in res["locations"] if loc["path"] == p) for p in ("calls.py", "main.py")}
    assert by_file == {"calls.py": 1000, "main.py": 2}  # main.py: its import and its call
    # 2,000 nested functions: read whole, scopes and all.
    deep = await related(s, symbol="level1999")
    assert deep["definition"] and deep["definition"][0]["path"] == "deep.js"
    t1 = time.monotonic()
    m = RepoMapResult.model_validate(await s.request("rag/repoMap", {"maxTokens": 300}))
    assert m.tokens <= 300 and time.monotonic() - t1 < 30


def test_a_script_reads_the_references_of_an_indexed_folder(graph_ws: Path, cache_dir: Path) -> None:
    """`ragls index` builds the graph; references_of reads it as rag/references does (for an
    evaluation against a language server)."""
    env = {**os.environ, "RAGLS_CACHE_DIR": str(cache_dir)}
    done = subprocess.run(
        [sys.executable, "-m", "ragls", "index", str(graph_ws)], capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr
    manifest = manifest_of(graph_ws, Settings.model_validate({"cacheDir": str(cache_dir)}))
    found = references_of(manifest, "HaversineKm")
    assert [(loc.path, loc.line, loc.symbol, loc.kind) for loc in found] == [
        ("services/api/handler.go", 11, "Handle", "call")
    ]


async def test_the_graph_survives_a_snapshot_round_trip(
    start: Starter, graph_ws: Path, cache_dir: Path, fresh_cache: Path, tmp_path: Path
) -> None:
    """A teammate's machine indexing from a snapshot (vectors only) answers the graph's questions
    as the machine that made it: the graph comes from the files, read in the same lexical pass."""
    env = {**os.environ, "RAGLS_CACHE_DIR": str(cache_dir)}
    snap = tmp_path / "graph.ragls-snapshot"
    done = subprocess.run(
        [sys.executable, "-m", "ragls", "snapshot", "export", str(graph_ws), "-o", str(snap), "-q"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr

    async def answers(s: Session) -> list[Any]:
        out: list[Any] = [await refs(s, name) for name in ("tax_rate", "HaversineKm", "RateLimiter", "render")]
        out.append(await related(s, symbol="checkout"))
        out.append(await related(s, path="shop/pricing.py"))
        out.append((await s.request("rag/repoMap", {"maxTokens": 400}))["text"])
        return out

    cold = await start(graph_ws, env={"RAGLS_CACHE_DIR": str(cache_dir)})
    await cold.wait_ready()
    made = await answers(cold)
    await cold.close()

    s = await start(graph_ws, init={"embedder": {"snapshot": str(snap)}}, env={"RAGLS_CACHE_DIR": str(fresh_cache)})
    st = await s.wait_ready()
    # (A fixture this small is all within the first vectors the model checks: none is reused.)
    assert st["snapshot"]["state"] == "imported" and st["snapshot"]["vectors"] == st["chunks"], st
    assert await answers(s) == made
    assert ("shop/cart.py", 14, "Cart.total", "call") in made[0]
