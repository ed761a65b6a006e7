"""The benchmark corpus: pinned packages (bench/corpus.toml) -> verified downloads ->
deterministic benchmark workspaces, plus what the run needs to know about them (chunk
counts, probe symbols, query and embedding samples).

Everything lives under ${XDG_CACHE_HOME:-~/.cache}/ragls-bench (or --cache): `downloads/`
(verified on every run), `extracted/` (one folder per archive) and `workspaces/NAME/`
(rebuilt on every run, so a run never starts from a tree an earlier run touched).
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
import subprocess
import tarfile
import tempfile
import tomllib
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pathspec
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

HERE = Path(__file__).resolve().parent
CORPUS_FILE = HERE / "corpus.toml"
# Fixed file times: the indexer orders work by mtime (newest first), so the order files are
# indexed in is the same on every run and every machine.
BASE_MTIME_NS = 1_700_000_000 * 10**9


class Package(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    registry: Literal["pypi", "npm", "debian"]
    package: str | None = None  # registry name when it differs from `name`
    version: str
    filename: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    url: str | None = None
    subdir: str
    exclude: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self) -> Package:
        if self.registry == "pypi" and not self.url:
            raise ValueError(f"{self.name}: pypi packages need `url`")
        return self

    @property
    def registry_name(self) -> str:
        return self.package or self.name


class Size(BaseModel):
    model_config = ConfigDict(extra="forbid")

    packages: list[str] = Field(min_length=1)
    max_chunks: int | None = Field(default=None, ge=1)
    max_files: int | None = Field(default=None, ge=1)
    lexical_only: bool = False


class Corpus(BaseModel):
    model_config = ConfigDict(extra="forbid")

    package: list[Package]
    size: dict[str, Size]

    @model_validator(mode="after")
    def _check(self) -> Corpus:
        names = {p.name for p in self.package}
        for sname, s in self.size.items():
            missing = [p for p in s.packages if p not in names]
            if missing:
                raise ValueError(f"size {sname}: unknown packages {missing}")
        return self

    def get(self, name: str) -> Package:
        return next(p for p in self.package if p.name == name)


def load_corpus(path: Path = CORPUS_FILE) -> Corpus:
    try:
        return Corpus.model_validate(tomllib.loads(path.read_text("utf-8")))
    except (OSError, tomllib.TOMLDecodeError, ValidationError) as exc:
        raise SystemExit(f"{path}: {exc}") from exc


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragls-bench"


# ------------------------------------------------------------------------------- downloads


def sha256_of(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900)


def _download(pkg: Package, workdir: Path) -> Path:
    """Fetch one pinned file with the registry's ordinary client."""
    if pkg.registry == "pypi":
        assert pkg.url is not None
        req = urllib.request.Request(pkg.url, headers={"User-Agent": "ragls-bench"})
        with urllib.request.urlopen(req, timeout=600) as resp, (workdir / pkg.filename).open("wb") as out:
            shutil.copyfileobj(resp, out)
    elif pkg.registry == "npm":
        r = _run(["npm", "pack", "--silent", f"{pkg.registry_name}@{pkg.version}", "--pack-destination", "."], workdir)
        if r.returncode:
            raise RuntimeError(f"npm pack {pkg.registry_name}@{pkg.version} failed: {r.stderr[-1500:]}")
    else:
        cmd = ["apt-get", "download", f"{pkg.registry_name}={pkg.version}"]
        r = _run(cmd, workdir)
        if r.returncode and hasattr(os, "geteuid") and os.geteuid() == 0:
            # A fresh machine may not have package lists yet.
            _run(["apt-get", "update", "-qq"], workdir)
            r = _run(cmd, workdir)
        if r.returncode:
            raise RuntimeError(
                f"{' '.join(cmd)} failed: {r.stderr[-1500:]}\n"
                "(run `apt-get update` first; Debian packages need a Debian 12 machine)"
            )
    target = workdir / pkg.filename
    if not target.is_file():
        found = ", ".join(p.name for p in workdir.iterdir()) or "nothing"
        raise RuntimeError(f"{pkg.name}: expected {pkg.filename}, got {found}")
    return target


def fetch(pkg: Package, downloads: Path, log=print) -> Path:  # type: ignore[no-untyped-def]
    """The verified download for `pkg`, fetched once and re-checked on every call."""
    downloads.mkdir(parents=True, exist_ok=True)
    cached = downloads / pkg.filename
    if not cached.is_file():
        log(f"  downloading {pkg.registry}:{pkg.registry_name} {pkg.version}")
        with tempfile.TemporaryDirectory(dir=downloads) as tmp:
            got = _download(pkg, Path(tmp))
            actual = sha256_of(got)
            if actual != pkg.sha256:
                raise RuntimeError(f"{pkg.filename}: sha256 {actual}, expected {pkg.sha256}")
            got.replace(cached)
    actual = sha256_of(cached)
    if actual != pkg.sha256:
        raise RuntimeError(f"cached {cached} has sha256 {actual}, expected {pkg.sha256}: delete it to download again")
    return cached


def extracted(pkg: Package, cache: Path, log=print) -> Path:  # type: ignore[no-untyped-def]
    """The unpacked archive of `pkg` (shared by entries with the same file)."""
    archive = fetch(pkg, cache / "downloads", log)
    dest = cache / "extracted" / pkg.sha256[:16]
    stamp = dest / ".complete"
    if not stamp.is_file():
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        if archive.name.endswith(".deb"):
            r = _run(["dpkg-deb", "-x", str(archive), str(dest)], dest)
            if r.returncode:
                raise RuntimeError(f"dpkg-deb -x {archive.name} failed: {r.stderr[-1500:]}")
        else:
            with tarfile.open(archive) as tar:
                tar.extractall(dest, filter="data")
        stamp.write_text(pkg.sha256 + "\n")
    src = dest / pkg.subdir
    if not src.is_dir():
        raise RuntimeError(f"{pkg.name}: {pkg.subdir} is not a folder of {pkg.filename}")
    return src


# ------------------------------------------------------------------------------ workspaces


@dataclass
class Probe:
    """A definition whose name is found by lexical search alone: the 'known hit'."""

    path: str
    symbol: str
    query: str

    def found_in(self, result: dict[str, object]) -> bool:
        for c in result.get("chunks") or []:  # type: ignore[union-attr]
            if c.get("path") == self.path and (c.get("symbol") or "").split(".")[-1].split("::")[-1] == self.query:
                return True
        return False


@dataclass
class Workspace:
    name: str
    root: Path
    files: int
    chunks: int
    bytes: int
    by_language: dict[str, int]  # chunks per language
    by_package: dict[str, dict[str, int]]  # package -> {files, chunks}
    probe_first: Probe  # in the file indexed first (newest mtime)
    probe_last: Probe  # in the file indexed last (oldest mtime)
    queries: list[str]
    sample_texts: list[str]  # embedding texts of sampled chunks, for the raw embedder figure
    lexical_only: bool = False
    # Embedding texts of the chunks the dense pass embeds first, in its order (newest files
    # first): the raw embedder's reference for a dense window of a lexical-only run is sampled
    # from exactly the range the window embedded (`window_sample`). Chunk lengths drift along
    # that order (files10k: the first 4,000 average 159 tokens, the first 1,900 178), so a
    # sample from a fixed range would compare the window with other chunks.
    dense_order_texts: list[str] = field(default_factory=list)
    packages: list[dict[str, str]] = field(default_factory=list)
    # Identifier probes spread over the whole workspace: lexical recall while it indexes.
    recall_probes: list[Probe] = field(default_factory=list)


NATURAL_QUERIES = [
    "how are errors wrapped and returned to the caller",
    "parse command line arguments into a struct",
    "retry a failed request with exponential backoff",
    "render a table with borders in the terminal",
    "serialize a map to json",
    "close the connection when the context is cancelled",
    "validate the form fields before saving",
    "spawn a task on the runtime and wait for it",
    "compute the bounding box of a mesh",
    "subscribe to an observable and unsubscribe on teardown",
    "load settings from environment variables",
    "read a file line by line with a buffer",
    "keep track of time with a timer that fires later",
    "escape html special characters",
    "where is the database migration applied",
    "test that the parser rejects invalid input",
]


def _copy_tree(src: Path, dst: Path, exclude: list[str]) -> None:
    spec = pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None
    for dirpath, dirnames, filenames in os.walk(src):
        rel_dir = Path(dirpath).relative_to(src)
        dirnames.sort()
        for name in sorted(filenames):
            rel = (rel_dir / name).as_posix()
            if spec is not None and spec.match_file(rel):
                continue
            s = Path(dirpath) / name
            if s.is_symlink() or not s.is_file():
                continue
            d = dst / rel
            d.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(s, d)


# Chunks of the dense order kept for the window's reference: more than a 120 s window embeds
# (~7,000 at 60 chunks/s).
WINDOW_CHUNKS = 20_000


def build_workspace(
    corpus: Corpus, size_name: str, cache: Path, seed: int = 7, sample_size: int = 400, log=print
) -> Workspace:  # type: ignore[no-untyped-def]
    """Copy the size's packages into a fresh workspace, cap it, set file times, pick probes."""
    from ragls.chunking import chunk_file
    from ragls.config import Settings
    from ragls.ingest.discovery import discover, read_source
    from ragls.ingest.secrets import redact

    size = corpus.size[size_name]
    root = cache / "workspaces" / size_name
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    pkgs = [corpus.get(n) for n in size.packages]
    for p in pkgs:
        _copy_tree(extracted(p, cache, log), root / p.name, p.exclude)

    settings = Settings()
    found = discover(root, settings)
    order = {p.name: i for i, p in enumerate(pkgs)}
    files = sorted(found.files, key=lambda f: (order[f.rel.split("/", 1)[0]], f.rel))
    kept: list[tuple[str, list]] = []  # (rel, chunks)  # type: ignore[type-arg]
    total_chunks = 0
    dropped = 0
    for f in files:
        full = (size.max_chunks is not None and total_chunks >= size.max_chunks) or (
            size.max_files is not None and len(kept) >= size.max_files
        )
        if full:
            f.path.unlink()
            dropped += 1
            continue
        res = read_source(f.path, settings.max_file_bytes, root)
        chunks = []
        if not res.skip:
            text, _ = redact(res.text or "", f.rel)  # the server scans with the path too
            chunks = chunk_file(f.rel, f.language, text, settings.indexing)
        if not chunks:
            continue  # skipped by the server too (generated, minified, empty): not a file of the run
        kept.append((f.rel, chunks))
        total_chunks += len(chunks)
    log(f"  {size_name}: {len(kept)} files, {total_chunks} chunks kept, {dropped} files dropped by the cap")

    # File times: kept order k gets BASE + k seconds, so the indexer (newest first) goes backwards.
    for k, (rel, _) in enumerate(kept):
        t = BASE_MTIME_NS + k * 10**9
        os.utime(root / rel, ns=(t, t))

    all_chunks = [c for _, cs in kept for c in cs]
    probe_last = _pick_probe(kept, all_chunks, from_end=False)
    probe_first = _pick_probe(kept, all_chunks, from_end=True)
    old = BASE_MTIME_NS - 10**12
    new = BASE_MTIME_NS + (len(kept) + 1000) * 10**9
    os.utime(root / probe_last.path, ns=(old, old))
    os.utime(root / probe_first.path, ns=(new, new))

    rng = random.Random(seed)
    first: list = []  # type: ignore[type-arg]
    newest_first = sorted(enumerate(kept), key=lambda e: (e[1][0] != probe_first.path, -e[0]))
    for _, (_, cs) in newest_first:
        first.extend(cs)  # the server's dense order: newest file first (probe_last is the oldest)
        if len(first) >= WINDOW_CHUNKS:
            break
    recall = _recall_probes(kept, all_chunks, random.Random(seed), 30, {probe_first.query, probe_last.query})
    sample = rng.sample(all_chunks, min(sample_size, len(all_chunks)))
    by_lang = Counter(c.language for c in all_chunks)
    by_pkg: dict[str, dict[str, int]] = {}
    for rel, cs in kept:
        d = by_pkg.setdefault(rel.split("/", 1)[0], {"files": 0, "chunks": 0})
        d["files"] += 1
        d["chunks"] += len(cs)
    # Identifier queries: names of sampled definitions (what a user asks for by name).
    defs = [c for c in all_chunks if c.kind in ("function", "method") and c.symbol]
    ident = [re.split(r"\.|::", c.symbol)[-1] for c in rng.sample(defs, min(16, len(defs)))]
    queries = [q for pair in zip(NATURAL_QUERIES, ident, strict=False) for q in pair]
    return Workspace(
        name=size_name,
        root=root,
        files=len(kept),
        chunks=total_chunks,
        bytes=sum((root / rel).stat().st_size for rel, _ in kept),
        by_language=dict(by_lang.most_common()),
        by_package=by_pkg,
        probe_first=probe_first,
        probe_last=probe_last,
        queries=queries,
        sample_texts=[c.embedding_text() for c in sample],
        # Each distinct text once, as the server embeds it (its embedding cache answers repeats).
        dense_order_texts=list(dict.fromkeys(c.embedding_text() for c in first))[:WINDOW_CHUNKS],
        lexical_only=size.lexical_only,
        recall_probes=recall,
        packages=[
            {
                "name": p.name,
                "registry": p.registry,
                "package": p.registry_name,
                "version": p.version,
                "sha256": p.sha256,
            }
            for p in pkgs
        ],
    )


_NAME_OK = re.compile(r"^(?=.*(_|[a-z][A-Z]))[A-Za-z][A-Za-z0-9_]{7,40}$")


def _recall_probes(
    kept: list[tuple[str, list]], all_chunks: list, rng: random.Random, n: int, avoid: set[str]
) -> list[Probe]:  # type: ignore[type-arg]
    """`n` functions of `_pick_probe`'s kind, from files drawn at random over the workspace."""
    names = Counter(re.split(r"\.|::", c.symbol)[-1] for c in all_chunks if c.symbol)
    corpus_text = "\n".join(x.text for x in all_chunks)
    out: list[Probe] = []
    for rel, chunks in rng.sample(kept, len(kept)):
        for c in chunks:
            if c.kind not in ("function", "method") or not c.symbol:
                continue
            name = re.split(r"\.|::", c.symbol)[-1]
            if name in avoid or names[name] != 1 or not _NAME_OK.match(name) or corpus_text.count(name) > 3:
                continue
            out.append(Probe(rel, c.symbol, name))
            break
        if len(out) >= n:
            break
    return out


def _pick_probe(kept: list[tuple[str, list]], all_chunks: list, from_end: bool) -> Probe:  # type: ignore[type-arg]
    """A function whose name is an identifier (snake or camel case, so the server's symbol boost
    applies), defined once, and rare in the corpus text."""
    names = Counter(re.split(r"\.|::", c.symbol)[-1] for c in all_chunks if c.symbol)
    corpus_text: str | None = None
    seq = reversed(kept) if from_end else iter(kept)
    for rel, chunks in seq:
        for c in chunks:
            if c.kind not in ("function", "method") or not c.symbol:
                continue
            name = re.split(r"\.|::", c.symbol)[-1]
            if names[name] != 1 or not _NAME_OK.match(name):
                continue
            if corpus_text is None:
                corpus_text = "\n".join(x.text for x in all_chunks)
            if corpus_text.count(name) > 3:
                continue
            return Probe(rel, c.symbol, name)
    raise RuntimeError("no probe symbol found in the workspace")


def window_sample(ws: Workspace, start: int, end: int, size: int = 400, seed: int = 7) -> list[str]:
    """A seeded sample of the texts a dense window embedded: chunks `start`..`end` of the dense
    order (the server's `embedded` count at the window's start and end)."""
    texts = ws.dense_order_texts[start:end]
    return random.Random(seed).sample(texts, min(size, len(texts)))
