"""Command line: `ragls` (LSP over stdio) | mcp | index | search | status | check | clear | schema | eval."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from ragls import __version__
from ragls.config import ResolvedSettings, Settings, SettingsError, resolve_settings


def _resolve(root: Path) -> ResolvedSettings:
    try:
        return resolve_settings(root)
    except SettingsError as exc:
        raise SystemExit(f"ragls: {exc}") from exc


def _settings(root: Path) -> Settings:
    return _resolve(root).settings


def _root(arg: str) -> Path:
    root = Path(arg).expanduser().resolve()
    if not root.is_dir():
        raise SystemExit(f"ragls: {arg} is not a directory")
    return root


def _index(root: Path, settings: Settings | ResolvedSettings, quiet: bool = False):  # type: ignore[no-untyped-def]
    """The folder's index, owned by this process or by the ragls process that owns it (an
    editor, an agent's `ragls mcp`), once it is up to date."""
    from ragls.shared_index import SharedIndex

    warnings: list[str] = []
    if isinstance(settings, ResolvedSettings):
        settings, warnings = settings.settings, settings.warnings
    index = SharedIndex(root, settings)
    index.settings_warnings = warnings
    index.open()
    t0 = time.monotonic()
    tty = sys.stderr.isatty()
    last_key: tuple[object, ...] = ()
    last_print = 0.0
    while True:
        s, _runs = index.status()
        if s.state != "indexing":
            break
        time.sleep(0.2)
        key = (s.phase, s.lexical.done, s.dense.done, s.files_total, s.chunks)
        now = time.monotonic()
        # A terminal gets a live line; a log gets a line only when counts move, at most every 2 s.
        if quiet or key == last_key or (not tty and now - last_print < 2):
            continue
        line = (
            f"{s.phase:<11} lexical {s.lexical.done}/{s.files_total}  dense {s.dense.done}/{s.files_total}"
            f"  chunks {s.chunks}  {now - t0:5.1f}s"
        )
        print(("\r" if tty else "") + line, end="" if tty else "\n", file=sys.stderr, flush=True)
        last_key, last_print = key, now
    if not quiet and tty:
        print(file=sys.stderr)
    if s.state == "error" and index.role != "client":
        index.close()
        raise SystemExit(f"ragls: {s.message}")
    return index


_STATUS_KEYS = (
    "state",
    "workspace",
    "filesTotal",
    "filesIndexed",
    "filesFailed",
    "filesSkipped",
    "skippedByReason",
    "chunks",
    "lastIndexedAt",
    "embedder",
    "store",
    "cache",
    "embedded",
    "message",
    "warnings",
)


def _status_dict(index) -> dict[str, object]:  # type: ignore[no-untyped-def]
    st, _runs = index.status()
    d = st.model_dump(by_alias=True)
    out: dict[str, object] = {k: d[k] for k in _STATUS_KEYS}
    out["errors"] = d["errors"][-10:]
    out["servedBy"] = index.role  # owner (this process), client (another ragls owns it) or private
    return out


def cmd_index(a: argparse.Namespace) -> int:
    root = _root(a.path)
    t0 = time.monotonic()
    index = _index(root, _resolve(root), a.quiet)
    if index.role == "client":
        # The owner was already up: make it re-scan now, as a standalone run would.
        index.reindex(False)
        time.sleep(0.3)
        index.close()
        index = _index(root, _resolve(root), True)
    st = _status_dict(index)
    index.close()
    st["seconds"] = round(time.monotonic() - t0, 2)
    print(json.dumps(st, indent=2))
    if st["state"] != "ready":
        print(f"ragls: index is not ready: {st.get('message') or st['state']}", file=sys.stderr)
        return 1
    if st["filesFailed"]:
        print(f"ragls: {st['filesFailed']} files failed (see errors)", file=sys.stderr)
        return 1
    return 0


def cmd_search(a: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from ragls.protocol import RetrieveParams
    from ragls.retrieval import QueryError

    root = _root(a.path)
    index = _index(root, _resolve(root), a.quiet)
    try:
        if a.status:
            print(json.dumps(_status_dict(index), indent=2))
        p = RetrieveParams(
            query=a.query, top_k=a.top_k, max_chars=a.max_chars, paths=a.paths or None, languages=a.languages or None
        )
        res = index.retrieve(p)
    except (QueryError, ValidationError) as exc:
        raise SystemExit(f"ragls: {exc}") from exc
    finally:
        index.close()
    if a.json:
        print(json.dumps(res.model_dump(by_alias=True, exclude={"error"}), indent=2))
    else:
        print(res.context or "(nothing relevant found)")
    return 0


def _model_identity(settings: Settings) -> tuple[str, int]:
    if settings.embedder.provider == "local":
        from ragls.embedding.onnx_local import DIMENSION, MODEL_NAME

        return f"{MODEL_NAME}-int8", DIMENSION
    from ragls.embedding import make_embedder

    emb = make_embedder(settings.embedder)
    return emb.model_id, emb.dimension


def cmd_status(a: argparse.Namespace) -> int:
    from ragls.store import manifest_path
    from ragls.store.manifest import Manifest

    root = _root(a.path)
    settings = _settings(root)
    live = _live_status(root, settings)
    if live is not None:  # a ragls process owns the folder: its view is the current one
        print(json.dumps(live, indent=2))
        return 0
    model_id, dim = _model_identity(settings)
    path = manifest_path(root, settings, model_id, dim)
    if not path.exists():
        print(json.dumps({"workspace": str(root), "indexed": False, "location": str(path.parent)}, indent=2))
        return 1
    m = Manifest(path)
    try:
        recs = m.all()
    finally:
        m.close()
    by_status: dict[str, int] = {}
    for r in recs.values():
        by_status[r.status] = by_status.get(r.status, 0) + 1
    print(
        json.dumps(
            {
                "workspace": str(root),
                "indexed": True,
                "location": str(path.parent),
                "files": len(recs),
                "byStatus": by_status,
                "chunks": sum(len(r.chunk_ids) for r in recs.values()),
                "model": model_id,
                "dimension": dim,
                "store": "remote" if settings.qdrant.url else "edge",
            },
            indent=2,
        )
    )
    return 0


def _live_status(root: Path, settings: Settings) -> dict[str, object] | None:
    """The owner's status when a ragls process owns the folder, without becoming its owner."""
    from ragls.owner import OwnerClient, OwnerLock, rendezvous
    from ragls.protocol import StatusEnvelope

    where = rendezvous(root, settings)
    probe = OwnerLock(where.lock)
    if probe.try_acquire():  # nobody owns it
        probe.release()
        return None
    try:
        client = OwnerClient(where.socket)
    except OSError:
        return None
    try:
        env = StatusEnvelope.model_validate(client.call("rag/indexStatus", {}, timeout=30))
    finally:
        client.close()
    out: dict[str, object] = {"workspace": str(root), "indexed": True, "live": True}
    out.update(env.status.model_dump(by_alias=True))
    return out


@contextlib.contextmanager
def _exclusive(root: Path, settings: Settings) -> Iterator[None]:
    """Hold the folder's owner lock for a command that works on the index files directly, so
    no ragls process indexes the folder meanwhile; refuse while one does."""
    from ragls.owner import OwnerLock, rendezvous

    try:
        lock = OwnerLock(rendezvous(root, settings).lock)
    except OSError:  # no sharing on this system: nothing to coordinate with
        yield
        return
    if not lock.try_acquire():
        raise SystemExit(f"ragls: a ragls process is using the index of {root}; close it (editor, agent) first")
    try:
        yield
    finally:
        lock.release()


def cmd_mcp(a: argparse.Namespace) -> int:
    from ragls.mcp_server import serve

    return serve(a.path)


def cmd_clear(a: argparse.Namespace) -> int:
    root = _root(a.path)
    settings = _settings(root)
    with _exclusive(root, settings):
        return _clear(root, settings)


def _clear(root: Path, settings: Settings) -> int:
    from ragls.config import cache_root
    from ragls.store import StoreError, workspace_id

    if settings.qdrant.url:
        from ragls.store.remote import RemoteStore

        model_id, dim = _model_identity(settings)
        try:
            store = RemoteStore(root, settings, model_id, dim)
            store.drop()
            print(f"dropped the server collection for {root}")
        except StoreError as exc:
            raise SystemExit(f"ragls: {exc}") from exc
    base = Path(settings.qdrant.path).expanduser() if settings.qdrant.path else cache_root(settings) / "index"
    target = base / workspace_id(root)
    if target.exists():
        shutil.rmtree(target)
        print(f"removed {target}")
    else:
        print(f"nothing to remove at {target}")
    return 0


def cmd_check(a: argparse.Namespace) -> int:
    from ragls.check import check_index
    from ragls.store import StoreError

    root = _root(a.path)
    settings = _settings(root)
    try:
        with _exclusive(root, settings):
            rep = check_index(root, settings)
    except StoreError as exc:
        raise SystemExit(f"ragls: {exc}") from exc
    print(json.dumps(rep.as_dict(), indent=2))
    return 0 if rep.consistent else 1


def cmd_schema(a: argparse.Namespace) -> int:
    from ragls.config import sensitive_keys, settings_schema

    if a.sensitive:
        print("\n".join(sensitive_keys()))
    else:
        print(json.dumps(settings_schema(), indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ragls", description="Code-retrieval language server.")
    parser.add_argument("--version", action="version", version=f"ragls {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    # LSP clients such as vscode-languageclient append --stdio; stdio is the only transport.
    parser.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="cmd")
    p = sub.add_parser("index", help="index a folder and print its status")
    p.add_argument("path")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_index)
    p = sub.add_parser("search", help="index (incrementally) and print the <rag_context> for a query")
    p.add_argument("path")
    p.add_argument("query")
    p.add_argument("-k", "--top-k", type=int, default=5)
    p.add_argument("--max-chars", type=int, default=4000)
    p.add_argument("--paths", nargs="*", default=None, help="workspace-relative globs")
    p.add_argument("--languages", nargs="*", default=None)
    p.add_argument("--json", action="store_true", help="print chunks as JSON")
    p.add_argument("--status", action="store_true", help="print the index status first")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_search)
    p = sub.add_parser("mcp", help="serve the folder's index to AI agents as MCP tools over stdio")
    p.add_argument("path", nargs="?", default=None, help="folder (default: the current directory)")
    p.set_defaults(func=cmd_mcp)
    p = sub.add_parser("status", help="print what is indexed for a folder, without indexing")
    p.add_argument("path")
    p.set_defaults(func=cmd_status)
    p = sub.add_parser("check", help="compare a folder's index with the files on disk")
    p.add_argument("path")
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("clear", help="delete a folder's index")
    p.add_argument("path")
    p.set_defaults(func=cmd_clear)
    p = sub.add_parser("schema", help="print the JSON Schema of the settings (the single source of every client)")
    p.add_argument("--sensitive", action="store_true", help="list only the trust-sensitive keys, one per line")
    p.set_defaults(func=cmd_schema)
    from ragls.evaluation.cli import add_eval_parser

    add_eval_parser(sub)
    try:  # the server-migration command lives with the remote store
        from ragls.migrate import add_migrate_parser

        add_migrate_parser(sub)
    except ImportError:
        pass
    a = parser.parse_args(argv)
    if a.cmd is None:
        from ragls.server import serve

        serve()
        return 0
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if a.verbose:
        logging.getLogger("ragls").setLevel(logging.DEBUG)
    return int(a.func(a))
