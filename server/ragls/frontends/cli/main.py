"""Command line: `ragls` (LSP over stdio) | mcp | index | search | status | check | clear | feedback | schema |
eval.

`index`, `search` and `mcp` take a workspace of one or several folders and go through the same
workspace object as the language server (workspace/index.py)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ragls import __version__
from ragls.frontends.cli.workspace_open import exit_on_settings_error
from ragls.frontends.cli.workspace_open import indexed as _indexed
from ragls.frontends.cli.workspace_open import open_workspace as _open
from ragls.frontends.cli.workspace_open import root_dir as _root
from ragls.frontends.cli.workspace_open import root_dirs as _roots
from ragls.text.escaping import label

# Settings, the protocol models and everything below them load on first use: the bare `ragls`
# (the language server) must answer `initialize` before pydantic and the pipeline are imported.
if TYPE_CHECKING:
    from ragls.config import ResolvedSettings, Settings
    from ragls.protocol import IndexStatus, RetrieveResultOut


def _resolve(root: Path) -> ResolvedSettings:
    from ragls.config import SettingsError, resolve_settings

    try:
        return resolve_settings(root)
    except SettingsError as exc:
        raise SystemExit(f"ragls: {label(str(exc))}") from exc


def _settings(root: Path) -> Settings:
    return _resolve(root).settings


def _print_json(payload: IndexStatus | RetrieveResultOut) -> None:
    print(json.dumps(payload.model_dump(by_alias=True), indent=2))


def cmd_index(a: argparse.Namespace) -> int:
    roots = _roots(a.paths)
    t0 = time.monotonic()

    async def run() -> tuple[IndexStatus, str]:
        """The status, and who served the folders (owner, client, private)."""
        ws = await _open(roots, a.quiet)
        try:
            clients = [f.shared for f in ws.folders.indexed if f.shared is not None and f.role == "client"]
            if clients:  # the owner was already up: make it re-scan now, as a standalone run would
                await asyncio.gather(*(asyncio.to_thread(index.reindex, False) for index in clients))
                await asyncio.sleep(0.3)
                st = await _indexed(ws, True)
            else:
                st = (await ws.status()).status
            return st, ", ".join(dict.fromkeys(ws.roles())) or "nobody"
        finally:
            await asyncio.to_thread(ws.close)

    st, served_by = asyncio.run(run())
    _print_json(st)
    print(f"ragls: indexed in {time.monotonic() - t0:.2f}s (served by {served_by})", file=sys.stderr)
    if st.state != "ready":
        print(f"ragls: index is not ready: {label(st.message or st.state)}", file=sys.stderr)
        return 1
    if st.files_failed:
        print(f"ragls: {st.files_failed} files failed (see errors)", file=sys.stderr)
        return 1
    return 0


def cmd_search(a: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from ragls.protocol import RetrieveParams
    from ragls.sharing.api import InvalidParams, validation_message

    roots = _roots([*a.paths, *a.folder])
    given = {
        "top_k": a.top_k,
        "max_chars": a.max_chars,
        "paths": a.paths_glob,
        "languages": a.languages,
        "intent": "change" if a.change else None,
    }
    try:  # the user's own arguments, checked before any indexing
        p = RetrieveParams(query=a.query, **{k: v for k, v in given.items() if v})
    except ValidationError as exc:
        raise SystemExit(f"ragls: {label(validation_message(exc))}") from exc

    async def run() -> RetrieveResultOut:
        ws = await _open(roots, a.quiet)
        try:
            if a.status:
                _print_json((await ws.status()).status)
            return await ws.retrieve(p)
        finally:
            await asyncio.to_thread(ws.close)

    try:
        res = asyncio.run(run())
    except InvalidParams as exc:  # bad globs
        raise SystemExit(f"ragls: {label(str(exc))}") from exc
    if a.json:
        _print_json(res)
        return 0 if res.error is None else 1
    # Warnings and errors quote paths and settings of the workspace: one line each (text/escaping.py).
    # The context block was escaped where it was made (query/context.py); --json prints data as it is.
    for w in res.warnings:
        print(f"ragls: warning: {label(w)}", file=sys.stderr)
    if res.error:
        raise SystemExit(f"ragls: {label(res.error)}")
    print(res.context or "(nothing relevant found)")
    return 0


def cmd_status(a: argparse.Namespace) -> int:
    """The rag/indexStatus of a workspace of these folders, without indexing: each folder's
    live status from the ragls process that owns it, else read from its index on disk (`message`
    says so). Exit 1 when a folder was never indexed."""
    from ragls.workspace.at_rest import indexed_here
    from ragls.workspace.index import WorkspaceIndex

    async def run() -> tuple[IndexStatus, bool]:
        ws = WorkspaceIndex(on_settings_error=exit_on_settings_error)
        for root in _roots(a.paths):
            ws.add_path(root)
        ws.folders.renest()
        ws.load_all_settings()
        st = (await ws.status(foreground=False, at_rest=True)).status
        missing = await asyncio.to_thread(lambda: any(not indexed_here(f.path, f.settings) for f in ws.folders.indexed))
        return st, missing

    st, missing = asyncio.run(run())
    _print_json(st)
    return 1 if missing else 0


@contextlib.contextmanager
def _exclusive(root: Path, settings: Settings) -> Iterator[None]:
    """Hold the folder's owner lock for a command that works on the index files directly, so
    no ragls process indexes the folder meanwhile; refuse while one does."""
    from ragls.sharing.owner import OwnerLock, rendezvous

    try:
        lock = OwnerLock(rendezvous(root, settings).lock)
    except OSError:  # no sharing on this system: nothing to coordinate with
        yield
        return
    if not lock.try_acquire():
        raise SystemExit(
            f"ragls: a ragls process is using the index of {label(str(root))}; close it (editor, agent) first"
        )
    try:
        yield
    finally:
        lock.release()


def cmd_mcp(a: argparse.Namespace) -> int:
    from ragls.frontends.mcp.server import serve

    return serve(a.paths)


def cmd_clear(a: argparse.Namespace) -> int:
    root = _root(a.path)
    settings = _settings(root)
    with _exclusive(root, settings):
        return _clear(root, settings)


def _clear(root: Path, settings: Settings) -> int:
    from ragls.config import cache_root
    from ragls.store import StoreError, workspace_id

    if settings.qdrant.url:
        from ragls.embedding import model_identity
        from ragls.store.remote import RemoteStore

        model_id, dim = model_identity(settings.embedder)
        try:
            store = RemoteStore(root, settings, model_id, dim)
            store.drop()
            print(f"dropped the server collection for {label(str(root))}")
        except StoreError as exc:
            raise SystemExit(f"ragls: {label(str(exc))}") from exc
    base = Path(settings.qdrant.path).expanduser() if settings.qdrant.path else cache_root(settings) / "index"
    target = base / workspace_id(root)
    if target.exists():
        shutil.rmtree(target)
        print(f"removed {label(str(target))}")
    else:
        print(f"nothing to remove at {label(str(target))}")
    return 0


def cmd_check(a: argparse.Namespace) -> int:
    from ragls.frontends.cli.check import check_index
    from ragls.store import StoreError

    root = _root(a.path)
    settings = _settings(root)
    try:
        with _exclusive(root, settings):
            rep = check_index(root, settings)
    except StoreError as exc:
        raise SystemExit(f"ragls: {label(str(exc))}") from exc
    print(json.dumps(rep.as_dict(), indent=2))
    return 0 if rep.consistent else 1


def cmd_snapshot_export(a: argparse.Namespace) -> int:
    """Bring the folder's index up to date (every vector into the embedding cache), then write
    the snapshot of its chunks."""
    from ragls.index.snapshot_export import export

    root = _root(a.path)
    resolved = _resolve(root)

    async def run() -> IndexStatus:
        ws = await _open([root], a.quiet)
        try:
            return (await ws.status()).status
        finally:
            await asyncio.to_thread(ws.close)

    st = asyncio.run(run())
    if st.state != "ready":
        raise SystemExit(f"ragls: the index of {label(str(root))} is not complete ({label(st.message or st.state)})")
    report = export(root, resolved.settings, Path(a.output).expanduser())
    print(json.dumps(report, indent=2))
    if report["missing"]:
        print(f"ragls: {report['missing']} chunks had no cached vector and are not in the snapshot", file=sys.stderr)
    return 0


def cmd_snapshot_import(a: argparse.Namespace) -> int:
    """Verify a snapshot and put its vectors into this machine's embedding cache, where indexing
    the folder takes them instead of embedding."""
    from ragls.config import cache_root
    from ragls.embedding.cache import EmbeddingCache
    from ragls.embedding.snapshot_source import ImportReport, import_snapshot
    from ragls.index.name_rerank import NAME_KEY
    from ragls.index.snapshot_export import identity_of

    root = _root(a.path)
    settings = _settings(root)
    identity = identity_of(settings)
    cache = EmbeddingCache(cache_root(settings) / "embeddings.sqlite", identity.model, identity.dimension)
    try:
        rep = import_snapshot(a.file, cache, identity, cache_root(settings), NAME_KEY, ImportReport(a.file))
    finally:
        cache.close()
    if rep.state != "imported":
        raise SystemExit(f"ragls: {label(rep.message or 'snapshot not imported')}")
    print(json.dumps({"imported": rep.vectors, **rep.info}, indent=2))
    return 0


def cmd_feedback(a: argparse.Namespace) -> int:
    from ragls.frontends.cli.feedback_replay import cmd_feedback as run

    return run(a)


def cmd_schema(a: argparse.Namespace) -> int:
    from ragls.config import flat_schema, sensitive_keys, settings_schema

    if a.protocol:
        from ragls.sharing.schema import protocol_schema

        print(json.dumps(protocol_schema(), indent=2))
    elif a.sensitive:
        print("\n".join(sensitive_keys()))
    elif a.flat:
        print(json.dumps(flat_schema(), indent=2))
    else:
        print(json.dumps(settings_schema(), indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    from ragls.private import restrict_umask
    from ragls.system import memory

    memory.limit_arenas()  # before any thread exists (ragls/memory.py)
    # The cache holds the code's text: everything this process and its workers create (the
    # Rust store's files included) is its user's only. Process-wide, so before any thread.
    restrict_umask()
    parser = argparse.ArgumentParser(prog="ragls", description="Code-retrieval language server.")
    parser.add_argument("--version", action="version", version=f"ragls {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    # LSP clients such as vscode-languageclient append --stdio; stdio is the only transport.
    parser.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="cmd")
    p = sub.add_parser("index", help="index folders (a workspace of one or several) and print the status")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_index)
    p = sub.add_parser(
        "search",
        help="index (incrementally) and print the <rag_context> for a query",
        description="Search the workspace of the folders given (several: one ranking over them, as a "
        "multi-root editor workspace): ragls search A B 'query', or ragls search --folder A --folder B 'query'.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="the workspace's folders")
    p.add_argument("query")
    p.add_argument("--folder", action="append", default=[], metavar="PATH", help="one more folder (repeatable)")
    p.add_argument("-k", "--top-k", type=int, default=None, help="default: the retrieval.topK setting")
    p.add_argument("--max-chars", type=int, default=None, help="default: the retrieval.maxChars setting")
    p.add_argument(
        "--paths",
        nargs="*",
        default=None,
        dest="paths_glob",
        help="workspace-relative globs (with several folders, `name/...` globs one folder)",
    )
    p.add_argument("--languages", nargs="*", default=None)
    p.add_argument(
        "--change",
        action="store_true",
        help="the query describes a change to make: rank the files it touches, git history included "
        '(rag/retrieve intent "change")',
    )
    p.add_argument("--json", action="store_true", help="print the rag/retrieve result as JSON")
    p.add_argument("--status", action="store_true", help="print the index status (as rag/indexStatus) first")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_search)
    p = sub.add_parser("mcp", help="serve the folders' index to AI agents as MCP tools over stdio")
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="the workspace's folders (default: the client's roots, else the current directory)",
    )
    p.set_defaults(func=cmd_mcp)
    p = sub.add_parser("status", help="print the index status (as rag/indexStatus), without indexing")
    p.add_argument("paths", nargs="+", metavar="PATH", help="the workspace's folders (one or several)")
    p.set_defaults(func=cmd_status)
    p = sub.add_parser("check", help="compare a folder's index with the files on disk")
    p.add_argument("path")
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("clear", help="delete a folder's index")
    p.add_argument("path")
    p.set_defaults(func=cmd_clear)
    p = sub.add_parser("snapshot", help="share an index's vectors: export a snapshot file, import one")
    snap = p.add_subparsers(dest="snapshot_cmd", required=True)
    q = snap.add_parser("export", help="index a folder, then write its vectors to a snapshot file")
    q.add_argument("path")
    q.add_argument("-o", "--output", required=True, help="the snapshot file to write")
    q.add_argument("-q", "--quiet", action="store_true")
    q.set_defaults(func=cmd_snapshot_export)
    q = snap.add_parser("import", help="verify a snapshot and put its vectors into this machine's embedding cache")
    q.add_argument("file", help="a snapshot file (or an http(s) URL)")
    q.add_argument("path", nargs="?", default=".", help="the folder whose settings choose the cache (default: .)")
    q.set_defaults(func=cmd_snapshot_import)
    p = sub.add_parser(
        "feedback",
        help="list, erase or tune from the ratings given to answers about a folder (docs/feedback.md)",
        description="The ratings of answers about a folder (rag/feedback, the MCP feedback tool), kept "
        "privately under $XDG_STATE_HOME/ragls/feedback. Replay them with: ragls eval --feedback PATH.",
    )
    p.add_argument("path", metavar="PATH")
    p.add_argument("--json", action="store_true", help="print the stored records as JSON")
    p.add_argument("--clear", action="store_true", help="erase the folder's ratings and its tuned ranker")
    p.add_argument(
        "--tune",
        action="store_true",
        help="fit a ranker to the folder's marked ratings (20 or more); written only when it does not lose to "
        "the default ranking on held-back ratings, used when feedback.tunedRanker is true",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="--tune: no indexing progress on stderr")
    p.set_defaults(func=cmd_feedback)
    p = sub.add_parser("schema", help="print the JSON Schema of the settings (the single source of every client)")
    p.add_argument("--sensitive", action="store_true", help="list only the trust-sensitive keys, one per line")
    p.add_argument("--flat", action="store_true", help="one entry per dotted key (retrieval.topK), as clients use it")
    p.add_argument(
        "--protocol",
        action="store_true",
        help="the JSON Schema of the rag/* protocol instead (params, results, notifications by method)",
    )
    p.set_defaults(func=cmd_schema)
    args = sys.argv[1:] if argv is None else argv
    # `eval` and `migrate` import heavy modules (the evaluator, qdrant-client: ~60 % of the
    # server's start-up when always registered); an editor starting the server waits for none.
    if {"eval", "migrate", "-h", "--help"} & set(args):
        from ragls.frontends.cli.eval_command import add_eval_parser

        add_eval_parser(sub)
        try:  # the server-migration command lives with the remote store
            from ragls.frontends.cli.migrate import add_migrate_parser

            add_migrate_parser(sub)
        except ImportError:
            pass
    a = parser.parse_args(args)
    if a.cmd is None:
        from ragls.frontends.lsp.server import serve

        serve()
        return 0
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if a.verbose:
        logging.getLogger("ragls").setLevel(logging.DEBUG)
    try:
        return int(a.func(a))
    except BrokenPipeError:
        # The reader went away (`ragls schema | head`): stop quietly, as other Unix tools do.
        # stdout is pointed at /dev/null so the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for such a pipeline
