"""One contract, every backend: EdgeStore (tmp dir), RemoteStore over qdrant-client's in-process
`:memory:` mode, and, opt-in, RemoteStore against a real server (RAGLS_TEST_QDRANT_URL)."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import qdrant_edge as qe
from qdrant_client import QdrantClient
from qdrant_client import models as qm
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from ragls.config import Settings
from ragls.frontends.cli.migrate import copy_manifest, iter_edge_points, migrate, remote_manifest_path, with_url
from ragls.index.worker import Indexer
from ragls.store import PointData, SearchRequest, Store, StoreError, index_dir
from ragls.store.edge import EdgeStore
from ragls.store.manifest import FileRecord, Manifest
from ragls.store.remote import RemoteStore, collection_name
from ragls.text import lexical

DIM = 16
SERVER_URL = os.environ.get("RAGLS_TEST_QDRANT_URL")
MODEL = "test-model"


def unit(seed: str) -> np.ndarray:
    """A deterministic random unit vector: the 'meaning' of a topic."""
    rng = np.random.default_rng(int(hashlib.sha1(seed.encode()).hexdigest()[:8], 16))
    v = rng.standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def pid(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, name))


# name -> (path, language, symbol, text, topic)
DOCS: dict[str, tuple[str, str, str | None, str, str]] = {
    "invoice": (
        "billing/invoice.py",
        "python",
        "Invoice.total",
        "def total(self): return sum(line.amount for line in self.lines) + tax",
        "money",
    ),
    "parser": (
        "src/parser.ts",
        "typescript",
        "parseConfig",
        "export function parseConfig(text: string) { return JSON.parse(text) }",
        "config",
    ),
    "loader": (
        "src/loader.ts",
        "typescript",
        "loadConfig",
        "export function loadConfig(path) { return parseConfig(readFile(path)) config config }",
        "config",
    ),
    "readme": ("README.md", "markdown", None, "Configuration: put config values in config.toml config file", "docs"),
    "server": ("cmd/server.go", "go", "main", "func main() { http.ListenAndServe(addr, router) }", "network"),
    "retry": (
        "net/retry.py",
        "python",
        "with_backoff",
        "def with_backoff(fn): sleep exponential backoff until the request succeeds",
        "network",
    ),
}


def point(name: str, dense: bool) -> PointData:
    path, lang, sym, text, topic = DOCS[name]
    names = sorted({".".join(sym.split(".")[i:]).lower() for i in range(len(sym.split(".")))}) if sym else []
    payload = {
        "path": path,
        "language": lang,
        "symbol": sym,
        "symbol_names": names,
        "text": text,
        "start_line": 0,
        "end_line": 3,
    }
    vec = unit(topic + name) * 0.3 + unit(topic) if dense else None
    if vec is not None:
        vec = (vec / np.linalg.norm(vec)).astype(np.float32)
    return PointData(pid(name), lexical.sparse_vector(f"{path}\n{sym or ''}\n{text}"), payload, vec)


def request(query: str, topic: str | None, **kw: object) -> SearchRequest:
    return SearchRequest(dense=unit(topic) if topic else None, sparse=lexical.query_vector(query), limit=10, **kw)  # type: ignore[arg-type]


# -- backends ---------------------------------------------------------------------------------
class Backend:
    """Opens the store under test; `reopen` simulates a restart of ragls."""

    def __init__(self, kind: str, tmp: Path) -> None:
        self.kind = kind
        self.tmp = tmp
        self.root = tmp / "ws"
        self.root.mkdir()
        self.client: QdrantClient | None = None
        if kind == "memory":
            self.client = QdrantClient(":memory:")  # shared so that a reopen finds the data: a "server"
        self.settings = Settings.model_validate(
            {
                "cacheDir": str(tmp / "cache"),
                "qdrant": {
                    "url": {"edge": None, "memory": ":memory:", "server": SERVER_URL}[kind],
                    "preferGrpc": False,
                    "collectionPrefix": "ragls-test",
                },
            }
        )
        self.opened: list[Store] = []

    def open(self) -> Store:
        if self.kind == "edge":
            store: Store = EdgeStore(self.tmp / "shard", DIM)
        else:
            store = RemoteStore(self.root, self.settings, MODEL, DIM, client=self.client)
        self.opened.append(store)
        return store

    def reopen(self, store: Store) -> Store:
        store.close()
        return self.open()

    def cleanup(self) -> None:
        for s in self.opened:
            if isinstance(s, RemoteStore) and self.kind == "server":
                try:
                    s.drop()
                except StoreError:
                    pass
            try:
                s.close()
            except Exception:
                pass


# The real-server backend is opt-in: collected only when RAGLS_TEST_QDRANT_URL is set, so a
# normal run (CI included) neither needs a server nor reports skips.
BACKENDS = ["edge", "memory"] + (["server"] if SERVER_URL else [])


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    b = Backend(request.param, tmp_path)
    yield b
    b.cleanup()


@pytest.fixture
def store(backend: Backend) -> Store:
    s = backend.open()
    s.upsert([point(n, dense=True) for n in DOCS])
    return s


def top(hits: list) -> str:  # type: ignore[type-arg]
    return hits[0].payload["path"] if hits else ""


# -- the contract ----------------------------------------------------------------------------
def test_sparse_first_then_set_dense(backend: Backend) -> None:
    s = backend.open()
    s.upsert([point(n, dense=False) for n in DOCS])
    ids = s.all_ids()
    assert s.count() == len(DOCS)
    assert ids == {pid(n): (DOCS[n][0], False) for n in DOCS}
    # Lexical search works before any dense vector exists.
    assert top(s.search(request("parseConfig JSON", None))) == "src/parser.ts"
    s.set_dense({pid("parser"): point("parser", True).dense, pid("server"): point("server", True).dense})  # type: ignore[dict-item]
    ids = s.all_ids()
    assert {i for i, (_, d) in ids.items() if d} == {pid("parser"), pid("server")}
    assert ids[pid("invoice")] == ("billing/invoice.py", False)
    # The payload survives a vector update.
    assert s.retrieve([pid("parser")])[0].payload["symbol"] == "parseConfig"


def test_hybrid_ranks_the_right_point_first(store: Store) -> None:
    hits = store.search(request("invoice total amount tax", "money"))
    assert top(hits) == "billing/invoice.py"
    assert hits[0].id == pid("invoice")
    assert hits[0].score > hits[-1].score
    # Dense alone and lexical alone each find their own best match.
    assert top(store.search(request("", "network"))) in ("cmd/server.go", "net/retry.py")
    assert top(store.search(request("exponential backoff", None))) == "net/retry.py"
    # Two lists disagreeing: the point both rank well wins the fusion.
    assert top(store.search(request("backoff request", "network"))) == "net/retry.py"


def test_dbsf_fusion(store: Store) -> None:
    hits = store.search(request("invoice total amount tax", "money", fusion="dbsf"))
    assert top(hits) == "billing/invoice.py"


def test_path_and_language_filters(store: Store) -> None:
    hits = store.search(request("config", "config", paths=["README.md", "src/loader.ts"]))
    assert {h.payload["path"] for h in hits} <= {"README.md", "src/loader.ts"} and hits
    hits = store.search(request("config", "config", languages=["typescript"]))
    assert {h.payload["language"] for h in hits} == {"typescript"}
    hits = store.search(request("config", "config", languages=["typescript"], paths=["src/parser.ts"]))
    assert [h.payload["path"] for h in hits] == ["src/parser.ts"]
    # An empty allow-list means "nothing matches", not "no filter".
    assert store.search(request("config", "config", paths=[])) == []
    assert store.search(request("config", "config", languages=[])) == []


def test_symbol_prefetch_lifts_the_named_definition(store: Store) -> None:
    plain = store.search(request("config", None))
    assert top(plain) != "src/parser.ts"  # lexically, other chunks say "config" more often
    boosted = store.search(request("config", None, symbol_names=["parseconfig"]))
    assert top(boosted) == "src/parser.ts"
    # The symbol list respects the filters too.
    filtered = store.search(request("config", None, symbol_names=["parseconfig"], languages=["markdown"]))
    assert [h.payload["path"] for h in filtered] == ["README.md"]


def test_by_symbol_finds_definitions_by_qualified_name_or_suffix(store: Store) -> None:
    assert {h.payload["symbol"] for h in store.by_symbol(["total"], 10)} == {"Invoice.total"}
    assert {h.payload["symbol"] for h in store.by_symbol(["invoice.total"], 10)} == {"Invoice.total"}
    found = store.by_symbol(["parseconfig", "loadconfig"], 10)
    assert sorted(h.payload["path"] for h in found) == ["src/loader.ts", "src/parser.ts"]
    assert store.by_symbol(["voice.total", "nothing"], 10) == []  # whole dotted parts only
    assert len(store.by_symbol(["parseconfig", "loadconfig"], 1)) == 1


def test_delete(store: Store) -> None:
    store.delete([pid("invoice"), pid("readme"), pid("never-stored")])
    assert store.count() == len(DOCS) - 2
    assert pid("invoice") not in store.all_ids()
    assert all(h.id != pid("invoice") for h in store.search(request("invoice total amount tax", "money")))
    assert store.retrieve([pid("invoice")]) == []
    store.delete([])  # no-op


def _text_point(text: str, path: str) -> PointData:
    payload = {"path": path, "language": "python", "symbol": None, "symbol_names": [], "text": text}
    return PointData(pid(text), lexical.sparse_vector(text), {**payload, "start_line": 0, "end_line": 1}, None)


def test_deleted_points_stop_counting_in_lexical_scores(backend: Backend) -> None:
    """Every edit deletes a file's old chunks; what was deleted must not keep weighing on BM25's
    IDF, or the terms of the files being worked on lose weight all session."""
    s = backend.open()
    s.upsert([_text_point(f"filler words number {i}", f"f{i}.py") for i in range(50)])
    s.upsert([_text_point("upload upload upload stream", "a.py"), _text_point("retry stream", "b.py")])
    q = request("upload retry", None)
    assert [h.payload["path"] for h in s.search(q)][:2] == ["a.py", "b.py"]
    for r in range(10):  # 1,000 chunks about uploads come and go (edits of an uploads module)
        churn = [_text_point(f"upload temp {r} {i}", f"tmp{i}.py") for i in range(100)]
        s.upsert(churn)
        s.delete([p.id for p in churn])
    assert s.count() == 52
    if backend.kind == "edge":
        # Qdrant Edge still counts the deleted points as documents holding "upload" (its IDF
        # falls as if 1,000 were live) until the shard is loaded again, which vacuum() does.
        assert [h.payload["path"] for h in s.search(q)][:2] == ["b.py", "a.py"]
        assert s.vacuum() is True
    else:
        assert s.vacuum() is False  # the server's optimizer is its own
    assert [h.payload["path"] for h in s.search(q)][:2] == ["a.py", "b.py"]
    assert s.vacuum() is False  # nothing deleted since
    assert s.count() == 52 and top(s.search(request("retry", None))) == "b.py"


def test_edge_searches_wait_for_a_vacuum_instead_of_failing(tmp_path: Path) -> None:
    s = EdgeStore(tmp_path / "shard", DIM)
    s.upsert([_text_point(f"retry upload number {i}", f"f{i}.py") for i in range(300)])
    s.delete([pid(f"retry upload number {i}") for i in range(150)])
    errors: list[BaseException] = []
    counts: list[int] = []
    done = threading.Event()

    def ask() -> None:
        while not done.is_set():
            try:
                counts.append(len(s.search(request("retry upload", None))))
                s.retrieve([pid("retry upload number 200")])
                s.count()
            except BaseException as exc:  # any failure is the finding
                errors.append(exc)

    t = threading.Thread(target=ask)
    t.start()
    try:
        time.sleep(0.05)
        assert s.vacuum() is True
        time.sleep(0.05)
    finally:
        done.set()
        t.join(10)
        s.close()
    assert not errors, errors
    assert counts and set(counts) == {10}


def test_retrieve_returns_payloads(store: Store) -> None:
    hits = store.retrieve([pid("server"), pid("retry"), pid("missing")])
    assert {h.id: h.payload["path"] for h in hits} == {pid("server"): "cmd/server.go", pid("retry"): "net/retry.py"}


def test_upsert_replaces_a_point(store: Store) -> None:
    p = point("server", dense=False)
    p.payload["text"] = "rewritten"
    store.upsert([p])
    assert store.count() == len(DOCS)
    assert store.retrieve([pid("server")])[0].payload["text"] == "rewritten"
    assert store.all_ids()[pid("server")][1] is False  # an upsert without dense drops the old vector


def test_reopen_keeps_points_and_dense_state(backend: Backend) -> None:
    s = backend.open()
    s.upsert([point(n, dense=n != "readme") for n in DOCS])
    s.flush()
    s = backend.reopen(s)
    assert s.count() == len(DOCS)
    assert {i for i, (_, d) in s.all_ids().items() if not d} == {pid("readme")}
    assert top(s.search(request("invoice total amount tax", "money"))) == "billing/invoice.py"


def test_all_ids_pages_through_many_points(backend: Backend) -> None:
    s = backend.open()
    n = 2500  # more than one scroll page
    s.upsert(
        [
            PointData(pid(f"p{i}"), ([i + 1], [1.0]), {"path": f"f{i % 7}.py"}, unit(str(i)) if i % 2 else None)
            for i in range(n)
        ]
    )
    ids = s.all_ids()
    assert len(ids) == n == s.count()
    assert sum(d for _, d in ids.values()) == n // 2


# -- RemoteStore specifics -------------------------------------------------------------------
def _settings(tmp: Path, **qdrant: object) -> Settings:
    return Settings.model_validate({"cacheDir": str(tmp / "cache"), "qdrant": {"url": ":memory:", **qdrant}})


def test_collection_name_has_workspace_model_and_dimension(tmp_path: Path) -> None:
    root = tmp_path / "My Project!"
    root.mkdir()
    name = collection_name(root, _settings(tmp_path, collectionPrefix="team"), "openai:text-embedding-3-small", 1536)
    assert name.startswith("team-My-Project-") and name.endswith("-openai-text-embedding-3-small-1536")
    assert all(c.isalnum() or c in "-_." for c in name)
    other = tmp_path / "b" / "My Project!"
    other.mkdir(parents=True)
    assert collection_name(other, _settings(tmp_path), "m", 8) != collection_name(root, _settings(tmp_path), "m", 8)


def test_memory_url_and_location(tmp_path: Path) -> None:
    s = RemoteStore(tmp_path, _settings(tmp_path), MODEL, DIM)
    try:
        assert s.kind == "remote" and s.location.startswith(":memory:/collections/ragls-")
        s.upsert([point("invoice", True)])
        assert s.count() == 1
    finally:
        s.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("grpc", [False, True])
def test_unreachable_server_is_a_clear_store_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grpc: bool) -> None:
    monkeypatch.setenv("RAGLS_TEST_QDRANT_KEY", "sekret-key-123456")
    port = _closed_port()
    settings = _settings(
        tmp_path, url=f"http://user:pw@127.0.0.1:{port}", apiKeyEnv="RAGLS_TEST_QDRANT_KEY", preferGrpc=grpc, timeoutS=2
    )
    t0 = time.monotonic()
    with pytest.raises(StoreError) as err:
        RemoteStore(tmp_path, settings, MODEL, DIM, sleep=lambda s: None)
    msg = str(err.value)
    assert "unreachable" in msg and f"127.0.0.1:{port}" in msg
    assert "sekret" not in msg and "pw@" not in msg
    assert time.monotonic() - t0 < 10


def test_transient_errors_are_retried_with_backoff(tmp_path: Path) -> None:
    sleeps: list[float] = []
    s = RemoteStore(tmp_path, _settings(tmp_path), MODEL, DIM, sleep=sleeps.append)
    real = s._client.upsert
    calls = {"n": 0}

    def flaky(*a: object, **kw: object) -> object:
        calls["n"] += 1
        if calls["n"] <= 2:
            raise ResponseHandlingException(ConnectionError("connection reset"))
        if calls["n"] == 3:
            raise UnexpectedResponse(503, "Service Unavailable", b"busy", None)  # type: ignore[arg-type]
        return real(*a, **kw)  # type: ignore[arg-type]

    s._client.upsert = flaky  # type: ignore[method-assign]
    s.upsert([point("invoice", True)])
    assert s.count() == 1 and calls["n"] == 4
    # Exponential from 0.5 s, with at most 10 % jitter on top.
    assert len(sleeps) == 3 and all(b <= x <= b * 1.1 for x, b in zip(sleeps, [0.5, 1.0, 2.0], strict=True))
    s.close()


def test_permanent_errors_fail_at_once(tmp_path: Path) -> None:
    sleeps: list[float] = []
    s = RemoteStore(tmp_path, _settings(tmp_path), MODEL, DIM, sleep=sleeps.append)

    def bad(*a: object, **kw: object) -> object:
        raise UnexpectedResponse(400, "Bad Request", b'{"status":{"error":"wrong input"}}', None)  # type: ignore[arg-type]

    s._client.upsert = bad  # type: ignore[method-assign]
    with pytest.raises(StoreError, match="400"):
        s.upsert([point("invoice", True)])
    assert sleeps == []
    s.close()


def test_old_server_without_weighted_rrf_falls_back_to_plain_rrf(tmp_path: Path) -> None:
    s = RemoteStore(tmp_path, _settings(tmp_path), MODEL, DIM)
    s.upsert([point(n, True) for n in DOCS])
    real = s._client.query_points
    seen: list[str] = []

    def old_server(*a: object, **kw: object) -> object:
        seen.append(type(kw["query"]).__name__)
        if isinstance(kw["query"], qm.RrfQuery):
            raise UnexpectedResponse(400, "Bad Request", b"unknown variant `rrf`", None)  # type: ignore[arg-type]
        return real(*a, **kw)  # type: ignore[arg-type]

    s._client.query_points = old_server  # type: ignore[method-assign]
    assert top(s.search(request("invoice total", "money"))) == "billing/invoice.py"
    assert top(s.search(request("invoice total", "money"))) == "billing/invoice.py"
    assert seen == ["RrfQuery", "FusionQuery", "FusionQuery"]
    s.close()


def test_existing_collection_with_other_dimension_is_refused(tmp_path: Path) -> None:
    client = QdrantClient(":memory:")
    settings = _settings(tmp_path)
    name = collection_name(tmp_path, settings, MODEL, DIM)
    client.create_collection(name, vectors_config={"dense": qm.VectorParams(size=3, distance=qm.Distance.COSINE)})
    with pytest.raises(StoreError, match="dimension 3"):
        RemoteStore(tmp_path, settings, MODEL, DIM, client=client)


# -- migrate ---------------------------------------------------------------------------------
def _edge_index(root: Path, settings: Settings) -> Path:
    d = index_dir(root, settings, MODEL, DIM)
    s = EdgeStore(d / "shard", DIM)
    s.upsert([point(n, dense=n != "readme") for n in DOCS])
    s.close()
    m = Manifest(d / "manifest.sqlite")
    m.put_many(
        [
            FileRecord(DOCS[n][0], "h" + n, 10, 1, DOCS[n][1], "lexical" if n == "readme" else "dense", [pid(n)], [])
            for n in DOCS
        ]
    )
    m.close()
    return d


def test_migrate_copies_points_vectors_payloads_and_manifest(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    src_settings = Settings.model_validate({"cacheDir": str(tmp_path / "cache")})
    src_dir = _edge_index(root, src_settings)
    # A different index base for the destination, so that the manifest really moves.
    dst_settings = with_url(Settings.model_validate({"cacheDir": str(tmp_path / "cache2")}), ":memory:")
    client = QdrantClient(":memory:")
    progress: list[tuple[int, int]] = []
    rep = migrate(
        root, src_settings, dst_settings, MODEL, DIM, client=client, progress=lambda a, b: progress.append((a, b))
    )
    assert (rep.points, rep.dense) == (len(DOCS), len(DOCS) - 1)
    assert progress[-1] == (len(DOCS), len(DOCS))
    dst = RemoteStore(root, dst_settings, MODEL, DIM, client=client)
    src = EdgeStore(src_dir / "shard", DIM)
    try:
        assert dst.all_ids() == src.all_ids()
        want = {p.id: p for batch in iter_edge_points(src) for p in batch}
        got = {r.id: r for r in client.retrieve(dst.collection, list(want), with_vectors=True, with_payload=True)}
        for i, p in want.items():
            assert got[str(i)].payload == p.payload
            sparse = got[str(i)].vector["lexical"]  # type: ignore[index]
            assert list(sparse.indices) == p.sparse[0]
            assert np.allclose(sparse.values, p.sparse[1])
            if p.dense is not None:
                # Edge stores float16; the server renormalises the copy for cosine: equal to ~1e-3.
                assert np.allclose(got[str(i)].vector["dense"], p.dense, atol=1e-3)  # type: ignore[index]
        assert top(dst.search(request("invoice total amount tax", "money"))) == "billing/invoice.py"
    finally:
        src.close()
        dst.close()
    moved = Manifest(Path(rep.manifest))
    try:
        assert rep.manifest_copied and Path(rep.manifest) == remote_manifest_path(root, dst_settings, MODEL, DIM)
        assert len(moved.all()) == len(DOCS) and moved.all()["README.md"].status == "lexical"
    finally:
        moved.close()
    # A second run refuses to overwrite a server index unless told to replace it.
    with pytest.raises(StoreError, match="replace"):
        migrate(root, src_settings, dst_settings, MODEL, DIM, client=client)
    Path(rep.manifest).unlink()
    with pytest.raises(StoreError, match=r"not empty.*replace"):
        migrate(root, src_settings, dst_settings, MODEL, DIM, client=client)
    rep2 = migrate(root, src_settings, dst_settings, MODEL, DIM, client=client, replace=True)
    assert rep2.points == len(DOCS)


def test_migrated_index_is_used_without_reindexing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """edge index by the indexer -> migrate -> the indexer on the server finds it all in place."""
    import ragls.store.remote as remote_mod
    from ragls.config import load_settings

    fixture = Path(__file__).parent.parent / "fixtures" / "polyglot"
    edge_settings = load_settings(
        fixture, ("test", {"cacheDir": str(tmp_path / "cache"), "indexing": {"watch": False}})
    )
    edge_idx = _run_indexer(fixture, edge_settings)
    chunks, edge_manifest = (
        edge_idx.snapshot().chunks,
        index_dir(fixture, edge_settings, "hash", DIM) / "manifest.sqlite",
    )
    server = QdrantClient(":memory:")
    remote_settings = with_url(edge_settings, ":memory:")
    rep = migrate(fixture, edge_settings, remote_settings, "hash", DIM, client=server)
    assert rep.points == chunks and rep.manifest_copied and edge_manifest.is_file()
    # The indexer opens its own client; hand it the "server" the copy went to.
    monkeypatch.setattr(remote_mod, "QdrantClient", lambda **kw: server)
    idx = _run_indexer(fixture, remote_settings, stop=False)
    try:
        snap = idx.snapshot()
        assert idx.handle.store is not None and idx.handle.store.kind == "remote"
        assert snap.state == "ready" and snap.chunks == chunks and snap.embedded == 0 and idx.state.batches == 0
        assert idx.handle.store.count() == chunks
    finally:
        idx.stop()


def test_migrate_without_an_index_names_what_exists(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    settings = Settings.model_validate({"cacheDir": str(tmp_path / "cache")})
    _edge_index(root, settings)
    with pytest.raises(StoreError, match=f"found indexes: {MODEL}-{DIM}"):
        migrate(root, settings, with_url(settings, ":memory:"), "other-model", 8, client=QdrantClient(":memory:"))


def test_copy_manifest_is_a_consistent_snapshot(tmp_path: Path) -> None:
    m = Manifest(tmp_path / "a" / "manifest.sqlite")
    m.set_meta("k", "v")  # still in the WAL, not yet checkpointed into the main file
    assert copy_manifest(tmp_path / "a" / "manifest.sqlite", tmp_path / "b" / "manifest.sqlite")
    m.close()
    copy = Manifest(tmp_path / "b" / "manifest.sqlite")
    assert copy.get_meta("k") == "v"
    copy.close()


def test_migrate_cli_parser_is_wired(tmp_path: Path) -> None:
    import argparse

    from ragls.frontends.cli.migrate import add_migrate_parser

    parser = argparse.ArgumentParser()
    add_migrate_parser(parser.add_subparsers(dest="cmd"))
    a = parser.parse_args(["migrate", str(tmp_path), "--to-url", "http://q:6333", "--replace"])
    assert a.cmd == "migrate" and a.to_url == "http://q:6333" and a.replace and callable(a.func)


# -- through the indexer ---------------------------------------------------------------------
class HashEmbedder:
    provider = "test"
    model_id = "hash"
    dimension = DIM

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return np.array([unit(t) for t in texts], dtype=np.float32).reshape(len(texts), DIM)

    def batches(self, texts: list[str]) -> list[list[int]]:
        return [list(range(i, min(i + 16, len(texts)))) for i in range(0, len(texts), 16)]

    def embed_query(self, text: str) -> np.ndarray:
        return unit(text)

    def close(self) -> None:
        pass


def _run_indexer(root: Path, settings: Settings, stop: bool = True) -> Indexer:
    idx = Indexer(root, settings, embedder=HashEmbedder())
    idx.start()
    assert idx.handle.ready.wait(20) and idx.handle.fatal is None, idx.handle.fatal
    deadline = time.monotonic() + 60
    while idx.busy() and time.monotonic() < deadline:
        time.sleep(0.05)
    if stop:
        idx.stop()
    return idx


def test_indexer_vacuums_the_edge_store_once_an_edit_is_indexed(tmp_path: Path) -> None:
    from ragls.config import load_settings

    ws = tmp_path / "ws"
    ws.mkdir()
    module = ws / "uploads.py"

    def write(version: int) -> None:
        funcs = [
            f"def upload_part_{i}(chunk):\n    # v{version}\n    return send(chunk, {i * version})\n"
            for i in range(130)
        ]
        module.write_text("\n\n".join(funcs))

    write(1)
    s = load_settings(ws, ("test", {"cacheDir": str(tmp_path / "cache"), "indexing": {"watch": False}}))
    idx = _run_indexer(ws, s, stop=False)
    try:
        store = idx.handle.store
        assert isinstance(store, EdgeStore)
        before = store.count()
        assert before >= 100, before
        write(2)  # every function changes: its old chunks are deleted, new ones added
        idx.notify_changes({"uploads.py"})
        deadline = time.monotonic() + 60
        while (store._deleted or idx.busy()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store._deleted == 0, "the indexer did not vacuum after the edit"
        assert store.count() == before
        hits = store.search(request("upload_part_7 send", None))
        assert hits and all("v2" in h.payload["text"] for h in hits)
    finally:
        idx.stop()


def test_indexer_runs_on_the_remote_backend(tmp_path: Path) -> None:
    from ragls.config import load_settings
    from ragls.query.retrieval import Ask, Sources, retrieve

    fixture = Path(__file__).parent.parent / "fixtures" / "polyglot"
    s = load_settings(
        fixture,
        ("test", {"cacheDir": str(tmp_path / "cache"), "qdrant": {"url": ":memory:"}, "indexing": {"watch": False}}),
    )
    idx = _run_indexer(fixture, s, stop=False)
    try:
        snap = idx.snapshot()
        assert idx.handle.store is not None and idx.handle.store.kind == "remote"
        assert snap.state == "ready" and snap.files_failed == 0 and snap.chunks == idx.handle.store.count() > 0
        assert all(d for _, d in idx.handle.store.all_ids().values())
        res = retrieve(
            Sources(idx.handle.store, idx.handle.embedder), s.retrieval, Ask("Invoice compute_total", 3, 4000)
        )
        assert res.hits and res.hits[0].path == "billing/invoice.py"
        # migrate writes the manifest where the indexer looks for it.
        assert remote_manifest_path(fixture, s, "hash", DIM).is_file()
    finally:
        idx.stop()


def test_edge_stores_float16_and_still_opens_a_float32_index(tmp_path: Path) -> None:
    """New shards store dense vectors as float16; a shard written before (float32) opens with
    its own config instead of failing the compatibility check, and searches as before."""
    new = EdgeStore(tmp_path / "new" / "shard", DIM)
    new.close()
    stored = json.loads((tmp_path / "new" / "shard" / "edge_config.json").read_text())
    assert stored["vectors"]["dense"]["datatype"] == "float16"

    old_dir = tmp_path / "old" / "shard"
    old_dir.parent.mkdir()
    old = qe.EdgeShard.create(
        str(old_dir),
        qe.EdgeConfig(
            vectors={"dense": qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)},
            sparse_vectors={"lexical": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        ),
    )
    old.close()
    s = EdgeStore(old_dir, DIM)
    try:
        s.upsert([point(n, dense=True) for n in DOCS])
        assert top(s.search(request("invoice total amount tax", "money"))) == "billing/invoice.py"
    finally:
        s.close()
    assert "datatype" not in json.loads((old_dir / "edge_config.json").read_text())["vectors"]["dense"]
