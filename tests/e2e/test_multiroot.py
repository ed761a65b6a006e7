"""Multi-root workspaces over the real server (issue 16): every folder indexed with its own ignore
rules, one fused and labelled ranking, `folders` and folder-prefixed globs, folders added and
removed at run time, nested folders indexed once, status totals over folders."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from ragls.protocol import PROTOCOL_VERSION
from tests.lsp_harness import Session, Starter

FILES = re.compile(r'<code_context file="([^"]+)"')


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


@pytest.fixture
def api(tmp_path: Path) -> Path:
    """Ignores generated/ (its own .gitignore) and private.md (its own .ragls.toml); keeps exports/."""
    return write(
        tmp_path / "api",
        {
            ".gitignore": "generated/\n",
            ".ragls.toml": 'exclude = ["private.md"]\n',
            "private.md": "# Private\n\nzebra_quokka_private notes of the api.\n",
            "billing.py": "def compute_invoice_total(lines, tax_rate):\n"
            '    """Sum the invoice lines and add the tax."""\n'
            "    subtotal = sum(l.price * l.qty for l in lines)\n"
            "    return subtotal * (1 + tax_rate)\n",
            "generated/zebra_api.py": "def zebra_quokka_api():\n    return 'generated in api'\n",
            "exports/zebra_dist.py": "def zebra_quokka_dist():\n    return 'dist kept in api'\n",
            "README.md": "# API\n\nThe billing service computes invoice totals.\n",
        },
    )


@pytest.fixture
def web(tmp_path: Path) -> Path:
    """Ignores exports/ (its own .gitignore) and plans/ (its own .ragignore); keeps generated/ and
    private.md."""
    return write(
        tmp_path / "web",
        {
            ".gitignore": "exports/\n",
            ".ragignore": "plans/\n",
            "plans/zebra_plan.py": "def zebra_quokka_plan():\n    return 'ragignored in web'\n",
            "private.md": "# Private\n\nzebra_quokka_private notes of the web.\n",
            "geo.ts": "export function haversineKm(lat1: number, lon1: number, lat2: number, lon2: number): number {\n"
            "  // great-circle distance between two coordinates on the globe\n"
            "  const r = 6371;\n"
            "  const dLat = ((lat2 - lat1) * Math.PI) / 180;\n"
            "  const dLon = ((lon2 - lon1) * Math.PI) / 180;\n"
            "  return 2 * r * Math.asin(Math.sqrt(dLat * dLat + dLon * dLon));\n"
            "}\n",
            "generated/zebra_web.py": "def zebra_quokka_web():\n    return 'generated kept in web'\n",
            "exports/zebra_web_dist.py": "def zebra_quokka_web_dist():\n    return 'dist in web'\n",
            "README.md": "# Web\n\nThe map page shows distances between cities.\n",
        },
    )


def where(res: dict[str, Any]) -> set[tuple[str, str]]:
    return {(c["folder"], c["path"]) for c in res["chunks"]}


async def ready_with(s: Session, n: int, timeout: float = 120) -> dict[str, Any]:
    """Ready with `n` folders listed (an added folder shows up before its index is ready)."""

    async def check() -> bool:
        st = await s.status()
        return len(st["folders"]) == n and st["state"] == "ready"

    await s.eventually(check, timeout)
    return await s.status()


def assert_totals(st: dict[str, Any]) -> None:
    own = [f for f in st["folders"] if f["nestedIn"] is None]
    for key in ("filesTotal", "filesIndexed", "filesFailed", "chunks"):
        assert st[key] == sum(f[key] for f in own), key
    for key in ("lexical", "dense"):
        assert st[key]["done"] == sum(f[key]["done"] for f in own), key


async def test_two_folders_fused_labelled_with_their_own_ignore_rules(start: Starter, api: Path, web: Path) -> None:
    s = await start(folders=[api, web])
    st = await s.wait_ready()
    assert st["protocolVersion"] == PROTOCOL_VERSION >= 3  # multi-root arrived in protocol 3
    assert [(f["name"], f["uri"], f["path"]) for f in st["folders"]] == [
        ("api", api.as_uri(), str(api)),
        ("web", web.as_uri(), str(web)),
    ]
    assert st["workspace"] == str(api)
    # api: billing.py, exports/zebra_dist.py, README.md, .ragls.toml; web: geo.ts,
    # generated/zebra_web.py, README.md, private.md.
    assert all(f["state"] == "ready" and f["filesIndexed"] == 4 for f in st["folders"]), st["folders"]
    assert_totals(st)

    # Each folder's .gitignore, .ragignore and .ragls.toml apply to that folder only.
    res = await s.retrieve("zebra_quokka", topK=20, maxChars=20_000)
    found = where(res)
    assert {("api", "exports/zebra_dist.py"), ("web", "generated/zebra_web.py"), ("web", "private.md")} <= found
    assert not any(p.startswith("generated/") or p == "private.md" for f, p in found if f == "api"), found
    assert not any(p.startswith(("exports/", "plans/")) for f, p in found if f == "web"), found

    # One ranking over both folders, each chunk labelled; context paths are folder/path.
    res = await s.retrieve("great-circle distance between two coordinates", topK=6, maxChars=50_000)
    assert res["chunks"][0]["folder"] == "web" and res["chunks"][0]["path"] == "geo.ts", where(res)
    assert {c["folder"] for c in res["chunks"]} == {"api", "web"}
    for c in res["chunks"]:
        root = api if c["folder"] == "api" else web
        assert c["folderUri"] == root.as_uri() and c["uri"] == (root / c["path"]).as_uri()
    scores = [c["score"] for c in res["chunks"]]
    assert scores == sorted(scores, reverse=True)
    assert FILES.findall(res["context"]) == [f"{c['folder']}/{c['path']}" for c in res["chunks"]]
    res = await s.retrieve("invoice total with tax", topK=3)
    assert (res["chunks"][0]["folder"], res["chunks"][0]["path"]) == ("api", "billing.py"), where(res)

    # `folders` restricts, by name or URI; an unknown name is an error naming the folders.
    only_api = await s.retrieve("zebra_quokka distance", topK=10, folders=["api"])
    assert only_api["chunks"] and {f for f, _ in where(only_api)} == {"api"}
    only_web = await s.retrieve("zebra_quokka distance", topK=10, folders=[web.as_uri()])
    assert only_web["chunks"] and {f for f, _ in where(only_web)} == {"web"}
    with pytest.raises(JsonRpcException) as err:
        await s.retrieve("x", folders=["nope"])
    assert err.value.code == -32602 and "'api', 'web'" in str(err.value)

    # A glob starting with a folder name applies to that folder; others to every folder.
    res = await s.retrieve("zebra_quokka distance invoice", topK=10, paths=["web/**"])
    assert res["chunks"] and {f for f, _ in where(res)} == {"web"}
    res = await s.retrieve("zebra_quokka", topK=10, paths=["api/exports/*.py", "web/generated/**"])
    assert where(res) == {("api", "exports/zebra_dist.py"), ("web", "generated/zebra_web.py")}
    res = await s.retrieve("service page distances billing", topK=10, paths=["*.md"])
    assert where(res) == {("api", "README.md"), ("web", "README.md"), ("web", "private.md")}


async def test_folders_added_and_removed_at_run_time(start: Starter, api: Path, web: Path, tmp_path: Path) -> None:
    docs = write(
        tmp_path / "docs", {"runbook.md": "# Runbook\n\nTo rotate the xylophone credentials, run rotate.sh.\n"}
    )
    s = await start(folders=[api, web])
    await s.wait_ready()
    before = await s.retrieve("rotate the xylophone credentials", topK=10)
    assert "docs" not in {c["folder"] for c in before["chunks"]}

    s.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=docs.as_uri(), name="docs")], removed=[]
            )
        )
    )
    st = await ready_with(s, 3)
    assert [f["name"] for f in st["folders"]] == ["api", "web", "docs"] and st["folders"][2]["filesIndexed"] == 1
    assert_totals(st)
    res = await s.retrieve("rotate the xylophone credentials", topK=3)
    assert (res["chunks"][0]["folder"], res["chunks"][0]["path"]) == ("docs", "runbook.md"), where(res)
    assert res["chunks"][0]["folderUri"] == docs.as_uri()

    s.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(uri=web.as_uri(), name="web")]
            )
        )
    )
    st = await ready_with(s, 2)
    assert [f["name"] for f in st["folders"]] == ["api", "docs"]
    assert_totals(st)
    res = await s.retrieve("great-circle distance zebra_quokka", topK=10)
    assert res["chunks"] and "web" not in {c["folder"] for c in res["chunks"]}, where(res)
    with pytest.raises(JsonRpcException):
        await s.retrieve("x", folders=["web"])


async def test_nested_folder_is_indexed_once(start: Starter, api: Path, web: Path, tmp_path: Path) -> None:
    outer = write(tmp_path / "mono", {"tool.py": "def build_all():\n    return 'builds every package'\n"})
    inner = write(outer / "pkg", {"walrus.py": "def walrus_checksum(data):\n    return sum(data) % 251\n"})
    alone = await start(folders=[outer])
    alone_st = await alone.wait_ready()
    await alone.close()

    s = await start(folders=[inner, outer])
    st = await s.wait_ready()
    entries = {f["name"]: f for f in st["folders"]}
    assert entries["pkg"]["nestedIn"] == "mono" and entries["mono"]["nestedIn"] is None
    assert entries["pkg"]["filesTotal"] == entries["pkg"]["chunks"] == 0
    assert (st["filesIndexed"], st["chunks"]) == (entries["mono"]["filesIndexed"], entries["mono"]["chunks"])
    assert (
        (st["filesIndexed"], st["chunks"]) == (alone_st["filesIndexed"], alone_st["chunks"]) == (2, alone_st["chunks"])
    )
    assert_totals(st)
    assert st["workspace"] == str(inner)  # the first folder, even when it is nested

    res = await s.retrieve("walrus_checksum", topK=10)
    hits = [(c["folder"], c["path"]) for c in res["chunks"] if "walrus_checksum" in c["content"]]
    assert hits == [("mono", "pkg/walrus.py")]
    scoped = await s.retrieve("build every package checksum", topK=10, folders=["pkg"])
    assert scoped["chunks"] and where(scoped) == {("mono", "pkg/walrus.py")}


# -- the same workspace from the command line: `ragls index A B`, `ragls search A B "query"` ----


def cli(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RAGLS_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "ragls", *args], capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.slow
def test_cli_indexes_and_searches_several_folders_as_one_workspace(api: Path, web: Path, fresh_cache: Path) -> None:
    p = cli(fresh_cache, "index", str(api), str(web), "-q")
    assert p.returncode == 0, p.stderr
    st = json.loads(p.stdout)
    assert [(f["name"], f["path"], f["filesIndexed"]) for f in st["folders"]] == [
        ("api", str(api), 4),
        ("web", str(web), 4),
    ]
    assert st["state"] == "ready" and st["workspace"] == str(api)
    assert_totals(st)
    assert "served by owner" in p.stderr

    # One ranking over both folders, labelled, paths folder/path in the context (as over LSP).
    p = cli(fresh_cache, "search", str(api), str(web), "great-circle distance between two coordinates", "-k", "6")
    assert p.returncode == 0, p.stderr
    assert FILES.findall(p.stdout)[0] == "web/geo.ts"
    p = cli(fresh_cache, "search", str(api), str(web), "zebra_quokka", "-k", "20", "--max-chars", "20000", "--json")
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    found = where(res)
    assert {("api", "exports/zebra_dist.py"), ("web", "generated/zebra_web.py"), ("web", "private.md")} <= found
    assert not any(p.startswith("generated/") or p == "private.md" for f, p in found if f == "api"), found
    for c in res["chunks"]:
        root = api if c["folder"] == "api" else web
        assert c["folderUri"] == root.as_uri() and c["uri"] == (root / c["path"]).as_uri()
    # The same workspace with --folder, and a folder-prefixed glob.
    p = cli(fresh_cache, "search", "zebra_quokka", "--folder", str(api), "--folder", str(web), "--json", "-k", "20")
    assert p.returncode == 0, p.stderr
    assert where(json.loads(p.stdout)) == {(c["folder"], c["path"]) for c in res["chunks"]}
    p = cli(fresh_cache, "search", str(api), str(web), "zebra_quokka", "--paths", "web/**", "--json", "-k", "20")
    assert p.returncode == 0, p.stderr
    assert {f for f, _ in where(json.loads(p.stdout))} == {"web"}
    # One folder answers as before: its chunks, labelled with its name.
    p = cli(fresh_cache, "search", str(api), "invoice total with tax", "--json", "-k", "3")
    assert p.returncode == 0, p.stderr
    one = json.loads(p.stdout)
    assert (one["chunks"][0]["folder"], one["chunks"][0]["path"]) == ("api", "billing.py")
    assert FILES.findall(one["context"])[0] == "billing.py"
    p = cli(fresh_cache, "search", "x")
    assert p.returncode != 0 and "at least one folder" in p.stderr
