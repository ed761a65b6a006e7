"""`ragls mcp` driven by the official MCP SDK's stdio client, alone and sharing one folder's
index with editor (LSP) sessions: one owner process, one indexing run, unsaved buffers visible
to the agent, and a takeover after kill -9 that re-embeds nothing."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as mt
from lsprotocol import types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from ragls.protocol import ChunkOut, IndexStatus
from ragls.store import workspace_id
from tests.gitrepo import git as _git
from tests.lsp_harness import Starter

QUERY = "calculate the invoice total including tax"


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAGLS_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(cache)  # isolated per test: the index, the socket and the embeddings
    return env


@asynccontextmanager
async def mcp_session(
    path: Path | list[Path], cache: Path, roots: list[Path] | None = None, progress: list[Any] | None = None
) -> AsyncIterator[ClientSession]:
    paths = path if isinstance(path, list) else [path]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ragls", "mcp", *map(str, paths)], env=_env(cache), cwd=str(paths[0])
    )

    async def list_roots(_ctx: Any) -> mt.ListRootsResult:
        return mt.ListRootsResult(roots=[mt.Root(uri=r.as_uri(), name=r.name) for r in roots or []])

    async with stdio_client(params) as (read, write):
        kwargs: dict[str, Any] = {"list_roots_callback": list_roots} if roots is not None else {}
        async with ClientSession(read, write, **kwargs) as session:
            await session.initialize()
            yield session


async def call(session: ClientSession, tool: str, args: dict[str, Any], **kw: Any) -> mt.CallToolResult:
    return await asyncio.wait_for(session.call_tool(tool, args, **kw), 120)


def text_of(res: mt.CallToolResult) -> str:
    assert res.content and isinstance(res.content[0], mt.TextContent), res
    return res.content[0].text


async def wait_ready(session: ClientSession, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        res = await call(session, "index_status", {})
        st = res.structured_content
        assert not res.is_error and st is not None, text_of(res)
        if st["state"] == "ready":
            return st
        assert st["state"] != "error", st
        assert time.monotonic() < deadline, st
        await asyncio.sleep(0.2)


async def test_mcp_tools_over_stdio(workspace: Path, tmp_path: Path) -> None:
    cache = tmp_path / "xdg"
    elsewhere = tmp_path / "elsewhere"  # PATH; the client's root (the workspace) must win
    elsewhere.mkdir()
    progress: list[tuple[float, float | None, str | None]] = []
    roots = [workspace]

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append((p, total, message))

    async with mcp_session(elsewhere, cache, roots=roots) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) == {
            "search_code",
            "find_symbol",
            "find_files",
            "find_references",
            "related",
            "repo_map",
            "index_status",
            "reindex",
            "feedback",
        }
        for t in tools.values():
            assert t.description and len(t.description) > 80 and t.input_schema["type"] == "object"
            assert t.output_schema is not None
        assert tools["search_code"].input_schema["required"] == ["query"]
        chunk_props = tools["search_code"].output_schema["properties"]["chunks"]["items"]["properties"]
        assert set(chunk_props) == set(ChunkOut.model_json_schema(by_alias=True)["properties"])

        # First call on a fresh index: it waits for the keyword pass, reporting progress.
        res = await call(s, "search_code", {"query": QUERY, "top_k": 3}, progress_callback=on_progress)
        assert not res.is_error, text_of(res)
        out = res.structured_content
        assert out is not None and set(out) == {"chunks", "context", "warnings", "result_id"}
        # Embeddings may still be computing (ranking by keywords first), so only the file is sure.
        assert "billing/invoice.py" in [c["path"] for c in out["chunks"]], out["chunks"]
        assert progress and all(t and 0 <= p <= t for p, t, _ in progress), progress
        assert "indexing" in (progress[0][2] or "")

        st = await wait_ready(s)
        res = await call(s, "search_code", {"query": QUERY, "top_k": 3})
        out = res.structured_content
        assert out is not None and out["warnings"] == []
        assert out["chunks"][0]["path"] == "billing/invoice.py"
        assert out["chunks"][0]["uri"] == (workspace / "billing" / "invoice.py").as_uri()
        for c in out["chunks"]:
            ChunkOut.model_validate(c)
        assert out["context"].startswith("<rag_context>") and "compute_total" in out["context"]
        assert "billing/invoice.py" in text_of(res) and "<rag_context>" in text_of(res)
        IndexStatus.model_validate(st)
        assert st["workspace"] == str(workspace) and st["filesIndexed"] == 8
        status_words = text_of(await call(s, "index_status", {}))
        assert "ready" in status_words and "8 fully indexed of 8" in status_words

        # A CLI search on the same folder is a client of this owner: the very same chunks.
        cli = subprocess.run(
            [
                sys.executable,
                "-m",
                "ragls",
                "search",
                str(workspace),
                QUERY,
                "--json",
                "-k",
                "3",
                "--max-chars",
                "12000",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=_env(cache),
        )
        assert cli.returncode == 0, cli.stderr
        after = await call(s, "search_code", {"query": QUERY, "top_k": 3})
        assert json.loads(cli.stdout)["chunks"] == after.structured_content["chunks"]  # type: ignore[index]
        # ...and `ragls clear` refuses to delete an index in use.
        clear = subprocess.run(
            [sys.executable, "-m", "ragls", "clear", str(workspace)],
            capture_output=True,
            text=True,
            timeout=60,
            env=_env(cache),
        )
        assert clear.returncode != 0 and "is using the index" in clear.stderr

        for name in ("Invoice.compute_total", "compute_total", "invoice.COMPUTE_TOTAL"):
            res = await call(s, "find_symbol", {"name": name})
            assert not res.is_error, text_of(res)
            chunks = res.structured_content["chunks"]  # type: ignore[index]
            assert chunks[0]["symbol"] == "Invoice.compute_total", (name, chunks)
            assert "def compute_total" in chunks[0]["content"]
        res = await call(s, "find_symbol", {"name": "Invoice", "kind": "class"})
        assert res.structured_content["chunks"][0]["kind"].startswith("class")  # type: ignore[index]
        res = await call(s, "find_symbol", {"name": "no_such_symbol_anywhere"})
        assert not res.is_error and res.structured_content["chunks"] == []  # type: ignore[index]
        assert "No definitions found" in text_of(res)

        res = await call(s, "reindex", {})
        assert not res.is_error, text_of(res)
        assert res.structured_content["status"]["state"] == "ready"  # type: ignore[index]
        assert res.structured_content["status"]["embedded"] == st["embedded"]  # type: ignore[index]

        bad = [
            ("search_code", {}, "query"),
            ("search_code", {"query": "   "}, "query"),
            ("search_code", {"query": "x", "top_k": 0}, "top_k"),
            ("search_code", {"query": "x", "top_k": "many"}, "top_k"),
            ("search_code", {"query": "x", "paths": ["../outside/**"]}, "paths"),
            ("search_code", {"query": "x", "paths": "src/**"}, "paths"),
            ("search_code", {"query": "x", "bogus": 1}, "bogus"),
            ("find_files", {}, "change"),
            ("find_files", {"change": "x", "top_k": 31}, "top_k"),
            ("find_files", {"change": "x", "paths": ["../outside/**"]}, "paths"),
            ("find_symbol", {"name": ""}, "name"),
            ("find_symbol", {"kind": "class"}, "name"),
            ("reindex", {"full": [1]}, "full"),
            ("no_such_tool", {}, "Unknown tool"),
        ]
        for tool, args, needle in bad:
            res = await call(s, tool, args)
            assert res.is_error, (tool, args)
            assert needle in text_of(res), (tool, args, text_of(res))
        assert not (await call(s, "index_status", {})).is_error  # still up

        # The client opens another folder: the server follows its roots.
        other = tmp_path / "other"
        shutil.copytree(workspace, other)
        roots[:] = [other]
        with warnings.catch_warnings():  # roots are deprecated in MCP 2026-07-28; editors still send them
            warnings.simplefilter("ignore")
            await s.send_roots_list_changed()
        deadline = time.monotonic() + 60
        while (await call(s, "index_status", {})).structured_content["workspace"] != str(other):  # type: ignore[index]
            assert time.monotonic() < deadline
            await asyncio.sleep(0.2)
        st2 = await wait_ready(s)
        assert st2["filesIndexed"] == 8 and st2["embedded"] == 0  # same texts: all from the embedding cache


async def test_mcp_serves_several_folders_as_one_workspace(workspace: Path, tmp_path: Path) -> None:
    """`ragls mcp A B` (and a client's roots with several entries) is a multi-root workspace, as in
    an editor: every folder indexed with its own rules, one fused ranking labelled by folder,
    `folders` and folder-prefixed globs, symbols found in any folder."""
    cache = tmp_path / "xdg"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "runbook.md").write_text("# Runbook\n\nTo rotate the xylophone credentials, run rotate.sh.\n")
    (docs / "rotate.py").write_text("def rotate_xylophone_credentials():\n    return 'rotated'\n")
    async with mcp_session([workspace, docs], cache) as s:
        st = await wait_ready(s)
        assert [(f["name"], f["path"]) for f in st["folders"]] == [("ws", str(workspace)), ("docs", str(docs))]
        assert st["filesIndexed"] == 10 and st["workspace"] == str(workspace)
        words = text_of(await call(s, "index_status", {}))
        assert "Folder ws (" in words and "Folder docs (" in words and "2 of 2 files" in words

        res = await call(s, "search_code", {"query": "rotate the xylophone credentials", "top_k": 4})
        out = res.structured_content
        assert not res.is_error and out is not None, text_of(res)
        assert (out["chunks"][0]["folder"], out["chunks"][0]["folderUri"]) == ("docs", docs.as_uri())
        assert out["chunks"][0]["path"] in ("runbook.md", "rotate.py")
        assert f'file="docs/{out["chunks"][0]["path"]}"' in out["context"]  # folder/path, as over LSP
        assert f"1. docs/{out['chunks'][0]['path']}:" in text_of(res)
        res = await call(s, "search_code", {"query": QUERY, "top_k": 3})
        assert (res.structured_content["chunks"][0]["folder"], res.structured_content["chunks"][0]["path"]) == (  # type: ignore[index]
            "ws",
            "billing/invoice.py",
        )
        only = await call(s, "search_code", {"query": "rotate credentials invoice", "folders": ["ws"]})
        assert {c["folder"] for c in only.structured_content["chunks"]} == {"ws"}  # type: ignore[index]
        only = await call(s, "search_code", {"query": "rotate credentials invoice", "paths": ["docs/*.md"]})
        assert {(c["folder"], c["path"]) for c in only.structured_content["chunks"]} == {("docs", "runbook.md")}  # type: ignore[index]
        bad = await call(s, "search_code", {"query": "x", "folders": ["nope"]})
        assert bad.is_error and "'ws', 'docs'" in text_of(bad)

        res = await call(s, "find_symbol", {"name": "rotate_xylophone_credentials"})
        chunks = res.structured_content["chunks"]  # type: ignore[index]
        assert (chunks[0]["folder"], chunks[0]["symbol"]) == ("docs", "rotate_xylophone_credentials")
        res = await call(s, "find_symbol", {"name": "Invoice.compute_total"})
        assert res.structured_content["chunks"][0]["folder"] == "ws"  # type: ignore[index]
        res = await call(s, "find_files", {"change": "rotate the xylophone credentials", "top_k": 2})
        files = [f["path"] for f in res.structured_content["files"]]  # type: ignore[index]
        assert files and files[0].startswith("docs/"), files

        res = await call(s, "reindex", {})
        assert not res.is_error and res.structured_content["status"]["state"] == "ready"  # type: ignore[index]

    # A client's roots with several entries: the same workspace, folders named by the client.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    roots = [workspace, docs]
    async with mcp_session(elsewhere, cache, roots=roots) as s:
        st = await wait_ready(s)
        assert [f["path"] for f in st["folders"]] == [str(workspace), str(docs)]
        assert st["embedded"] == 0  # the same texts: every vector from the embedding cache
        res = await call(s, "search_code", {"query": "rotate the xylophone credentials", "top_k": 2})
        assert res.structured_content["chunks"][0]["folder"] == "docs"  # type: ignore[index]
        roots[:] = [docs]  # one folder fewer: the workspace follows
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await s.send_roots_list_changed()
        deadline = time.monotonic() + 60
        while len((await call(s, "index_status", {})).structured_content["folders"]) != 1:  # type: ignore[index]
            assert time.monotonic() < deadline
            await asyncio.sleep(0.2)
        st = await wait_ready(s)
        assert st["workspace"] == str(docs) and st["filesIndexed"] == 2


CHANGE = "slow down customers who hammer the invoice endpoint"


async def test_find_files_ranks_by_code_and_git_history(workspace: Path, tmp_path: Path) -> None:
    """find_files: the files a described change touches, best first, with places in each; in a git
    repository the messages of earlier commits count, so the file that earlier work on customers
    hammering the invoice endpoint changed comes first, which the code alone does not rank first."""
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "Initial import")
    limiter = workspace / "services" / "RateLimiter.java"
    limiter.write_text(limiter.read_text().replace("ratePerSecond);", "ratePerSecond * 2);"))
    _git(workspace, "commit", "-q", "-am", "Invoice endpoint: slow down customers who hammer it")
    async with mcp_session(workspace, tmp_path / "xdg") as s:
        tool = {t.name: t for t in (await s.list_tools()).tools}["find_files"]
        assert tool.input_schema["required"] == ["change"]
        await wait_ready(s)
        res = await call(s, "find_files", {"change": CHANGE, "top_k": 3})
        assert not res.is_error, text_of(res)
        out = res.structured_content
        assert out is not None and set(out) == {"files", "warnings", "result_id"} and out["warnings"] == []
        paths = [f["path"] for f in out["files"]]
        assert paths[0] == "services/RateLimiter.java" and len(paths) == len(set(paths)) <= 3, paths
        first = out["files"][0]
        assert first["uri"] == limiter.as_uri() and 1 <= len(first["places"]) <= 3
        for place in first["places"]:
            assert ChunkOut.model_validate(place).path == "services/RateLimiter.java"
        assert text_of(res).splitlines()[1].startswith("1. services/RateLimiter.java (")
        # The same words asked as a question (search_code): the history plays no part.
        res = await call(s, "search_code", {"query": CHANGE, "top_k": 3})
        assert res.structured_content["chunks"][0]["path"] != "services/RateLimiter.java"  # type: ignore[index]
        res = await call(s, "find_files", {"change": CHANGE, "languages": ["python"]})
        assert [f["path"] for f in res.structured_content["files"]][:1] == ["billing/invoice.py"]  # type: ignore[index]
        # The CLI asks the same (rag/retrieve `intent: "change"`), as a client of this owner.
        for flag, limiter_first in ((["--change"], True), ([], False)):
            cli = subprocess.run(
                [sys.executable, "-m", "ragls", "search", str(workspace), CHANGE, "--json", *flag],
                capture_output=True,
                text=True,
                timeout=120,
                env=_env(tmp_path / "xdg"),
            )
            assert cli.returncode == 0, cli.stderr
            first_path = json.loads(cli.stdout)["chunks"][0]["path"]
            assert (first_path == "services/RateLimiter.java") == limiter_first, (flag, cli.stdout[:500])


def frame(msg: dict[str, Any]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def unframe(data: bytes) -> list[dict[str, Any]]:
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        n = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
        out.append(json.loads(rest[:n]))
        data = rest[n:]
    return out


async def wait_lsp_ready(session: Any, timeout: float = 120) -> dict[str, Any]:
    return await session.wait_ready(timeout)


def _index_dirs(cache: Path, ws: Path) -> list[Path]:
    base = cache / "ragls" / "index" / workspace_id(ws)
    return sorted(p for p in base.rglob("*") if p.is_dir() and (p.name == "shard" or p.name.startswith("alt-")))


def _shard_holders(cache: Path) -> set[int]:
    """Processes with a file of an index open or mapped (the shard's WAL lock, its segments)."""
    index = str(cache / "ragls" / "index")
    pids: set[int] = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            opened = [os.readlink(fd) for fd in (proc / "fd").iterdir()]
            opened += (proc / "maps").read_text().split()
        except OSError:  # gone, or not ours to read
            continue
        if any(p.startswith(index) for p in opened):
            pids.add(int(proc.name))
    return pids


def _owner_pid(cache: Path, ws: Path) -> int:
    return int((cache / "ragls" / "run" / f"{workspace_id(ws)}.lock").read_text().split()[0])


async def test_editor_and_agent_share_one_index(start: Starter, workspace: Path, tmp_path: Path) -> None:
    cache = tmp_path / "xdg"
    env = {"RAGLS_CACHE_DIR": "", "XDG_CACHE_HOME": str(cache)}
    editor = await start(env=env)  # the first process on the folder: the owner
    st0 = await wait_lsp_ready(editor)
    owner = editor.client._server
    assert owner is not None and _owner_pid(cache, workspace) == owner.pid
    assert st0["embedded"] == st0["chunks"] > 0  # one indexing run

    run_dir = cache / "ragls" / "run"
    assert oct(run_dir.stat().st_mode & 0o777) == "0o700"
    sock = run_dir / f"{workspace_id(workspace)}.sock"
    assert oct(sock.stat().st_mode & 0o777) == "0o600"
    # The owner socket speaks JSON-RPC with LSP framing (pygls's protocol) and refuses paths
    # outside the folder, and a buffer without text.
    with socket.socket(socket.AF_UNIX) as raw:
        raw.connect(str(sock))
        raw.sendall(
            frame({"jsonrpc": "2.0", "id": 1, "method": "rag/hello"})
            + frame(
                {"jsonrpc": "2.0", "id": 2, "method": "rag/openDocument", "params": {"path": "../x.py", "text": "x"}}
            )
            + frame(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "rag/openDocument",
                    "params": {"path": "/etc/passwd", "text": "x"},
                }
            )
            + frame({"jsonrpc": "2.0", "id": 4, "method": "rag/openDocument", "params": {"path": "x.py"}})
        )
        raw.shutdown(socket.SHUT_WR)
        answers = {m["id"]: m for m in unframe(raw.makefile("rb").read())}
    assert answers[1]["result"] == {"workspace": str(workspace), "version": st0["version"], "pid": owner.pid}
    assert answers[2]["error"]["code"] == answers[3]["error"]["code"] == answers[4]["error"]["code"] == -32602
    assert "text" in answers[4]["error"]["message"]

    async with mcp_session(workspace, cache) as agent:
        st = await wait_ready(agent)
        assert st["embedded"] == st0["embedded"] and st["store"]["location"] == st0["store"]["location"]
        assert "another ragls process on this folder" in text_of(await call(agent, "index_status", {}))

        second = await start(env=env)  # a second editor window: another client
        st2 = await wait_lsp_ready(second)
        assert st2["store"]["location"] == st0["store"]["location"] and not st2["message"]
        assert [p.name for p in _index_dirs(cache, workspace)] == ["shard"]  # no alt-N index
        assert _shard_holders(cache) == {owner.pid}  # three processes, one holds the index

        # An unsaved edit in the second editor reaches the agent through the owner.
        path = workspace / "billing" / "invoice.py"
        text = path.read_text() + "\n\ndef apply_zebra_loyalty_discount(invoice):\n    return invoice\n"
        second.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=path.as_uri(), language_id="python", version=1, text=text)
            )
        )

        async def agent_sees_buffer() -> bool:
            res = await call(agent, "search_code", {"query": "apply_zebra_loyalty_discount", "top_k": 3})
            return any(c["symbol"] == "apply_zebra_loyalty_discount" for c in res.structured_content["chunks"])  # type: ignore[index]

        await editor.eventually(agent_sees_buffer, timeout=20)
        before = await wait_ready(agent)  # the buffer's chunk embedded once, by the owner
        assert before["embedded"] == st0["embedded"] + 1

        # kill -9 the owner: the agent's next call succeeds on the same index, re-embedding nothing.
        t0 = time.monotonic()
        os.kill(owner.pid, signal.SIGKILL)
        res = await call(agent, "search_code", {"query": QUERY, "top_k": 3})
        took = time.monotonic() - t0
        assert not res.is_error, text_of(res)
        assert res.structured_content["chunks"][0]["path"] == "billing/invoice.py"  # type: ignore[index]
        new_owner = _owner_pid(cache, workspace)
        assert new_owner != owner.pid
        after = await wait_ready(agent)
        assert after["chunks"] == before["chunks"] and after["filesIndexed"] == 8
        assert after["embedded"] == 0  # a warm takeover: manifest and embedding cache survived
        assert after["store"]["location"] == st0["store"]["location"]
        assert [p.name for p in _index_dirs(cache, workspace)] == ["shard"]
        assert _shard_holders(cache) == {new_owner}
        await editor.eventually(agent_sees_buffer, timeout=20)  # the unsaved buffer was re-sent
        st3 = await wait_lsp_ready(second)  # the second editor follows the new owner too
        assert st3["chunks"] == after["chunks"]
        print(f"takeover after kill -9: first call answered in {took:.2f}s")

    # The agent quits (if it owned the index, the editor takes over): the editor keeps working.
    async def editor_sees_buffer() -> bool:
        res = await second.retrieve("apply_zebra_loyalty_discount", topK=3)
        return any(c["symbol"] == "apply_zebra_loyalty_discount" for c in res["chunks"])

    await second.eventually(editor_sees_buffer, timeout=20)
    assert _shard_holders(cache) == {second.client._server.pid}  # type: ignore[union-attr]
