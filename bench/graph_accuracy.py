"""The code graph's references against real language servers (issue 53): for each repository,
index it with ragls, sample definitions whose name is defined once in the index (uniquely
named) and a smaller sample of ambiguous ones (a name defined 2 to AMBIGUOUS_MAX times), ask
the language server for their references (`textDocument/references` at the definition's
name, includeDeclaration false) and ragls for the same definition's (`references_of`, as
`rag/references` answers), and compare them at the (path, line) level.

    PATH=/tmp/lsp/node_modules/.bin:/tmp/lsp/venv/bin:/tmp/lsp/bin:$PATH \\
    .venv/bin/python -m bench.graph_accuracy --out /tmp/graph-accuracy.json \\
        --repo python=/work/.mirror/PyCQA+isort/repo --repo go=/work/.mirror/junegunn+fzf/repo ...

A repository is `LANGUAGE=SOURCE[:PART,PART...]`: SOURCE a bare git directory (its HEAD is
checked out with `git archive`, only PARTs when given) or a plain folder. The language server
sees exactly the folder ragls indexed. Precision and recall are micro-averaged over the
(path, line) pairs of every sampled symbol: precision = shared / ragls's, recall = shared /
the server's; the definition's own line is left out of both, and so are the server's locations
outside the folder (the standard library, dependencies). Results go to --out as JSON, with each
repository's commit and licence, every symbol's misses and extras and the server's answer, and
a table on stdout.

    .venv/bin/python -m bench.graph_accuracy --rescore --out /tmp/graph-accuracy.json --work DIR

re-scores ragls's side of a stored run with today's resolution code (resolution happens at query
time, so `--work`'s indexes serve as they are) against the server answers the run stored:
a change to graph/resolve.py is measured without starting a language server again.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ragls.text.path_kinds import is_test_path

AMBIGUOUS_MAX = 6  # definitions of one name, at most, for the ambiguous sample
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "python": (".py",),
    "go": (".go",),
    "c": (".c", ".h"),
    "cpp": (".cc", ".cpp", ".cxx", ".hpp", ".hh", ".h"),
    "typescript": (".ts", ".tsx", ".mts", ".cts"),
    "javascript": (".js", ".mjs", ".cjs", ".jsx"),
    "php": (".php",),
}
LANGUAGE_IDS = {".tsx": "typescriptreact", ".jsx": "javascriptreact", ".h": "c", ".hpp": "cpp", ".cc": "cpp"}
_DUNDER = re.compile(r"^__\w+__$")


# -- pure parts (tests/unit/test_graph_accuracy.py) --------------------------------------------


@dataclass(frozen=True, slots=True, order=True)
class Def:
    path: str
    name: str
    kind: str
    scope: str
    line: int  # 1-based
    end_line: int

    @property
    def symbol(self) -> str:
        return f"{self.scope}.{self.name}" if self.scope else self.name


def eligible(d: Def, extensions: tuple[str, ...]) -> bool:
    """A definition worth asking about: in a file of the language outside the tests (test
    functions are called by the test runner, never by name), a name of 3 characters or more
    that is no dunder (`__init__`: every class has one)."""
    return d.path.endswith(extensions) and not is_test_path(d.path) and len(d.name) >= 3 and not _DUNDER.match(d.name)


def sample(
    defs: Iterable[Def], extensions: tuple[str, ...], n_unique: int, n_ambiguous: int, seed: int
) -> tuple[list[Def], list[Def]]:
    """Seeded samples of the definitions whose name is defined once in the whole index, and of
    ambiguous ones (one definition, picked at random, of a name defined 2..AMBIGUOUS_MAX times)."""
    by_name: dict[str, list[Def]] = {}
    for d in defs:
        by_name.setdefault(d.name, []).append(d)
    rng = random.Random(seed)
    unique = sorted(ds[0] for ds in by_name.values() if len(ds) == 1 and eligible(ds[0], extensions))
    names = sorted(
        n for n, ds in by_name.items() if 2 <= len(ds) <= AMBIGUOUS_MAX and any(eligible(d, extensions) for d in ds)
    )
    picked_unique = sorted(rng.sample(unique, min(n_unique, len(unique))))
    ambiguous = []
    for n in sorted(rng.sample(names, min(n_ambiguous, len(names)))):
        ambiguous.append(rng.choice(sorted(d for d in by_name[n] if eligible(d, extensions))))
    return picked_unique, ambiguous


def utf16_column(text: str, index: int) -> int:
    return len(text[:index].encode("utf-16-le")) // 2


def name_position(lines: list[str], name: str, line: int, end_line: int) -> tuple[int, int] | None:
    """Where the definition's name stands (0-based line, UTF-16 column): its first whole-word
    occurrence from the definition's first line, within a few lines (decorators, a return type
    on the line before the name)."""
    word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    for i in range(line - 1, min(end_line, line + 8, len(lines))):
        m = word.search(lines[i])
        if m:
            return i, utf16_column(lines[i], m.start())
    return None


@dataclass
class Tally:
    symbols: int = 0
    with_references: int = 0  # symbols the server found any reference of
    shared: int = 0
    ragls: int = 0
    server: int = 0

    def add(self, ours: set[tuple[str, int]], theirs: set[tuple[str, int]]) -> None:
        self.symbols += 1
        self.with_references += bool(theirs)
        self.shared += len(ours & theirs)
        self.ragls += len(ours)
        self.server += len(theirs)

    def merge(self, other: Tally) -> None:
        for k in ("symbols", "with_references", "shared", "ragls", "server"):
            setattr(self, k, getattr(self, k) + getattr(other, k))

    @property
    def precision(self) -> float | None:
        return self.shared / self.ragls if self.ragls else None

    @property
    def recall(self) -> float | None:
        return self.shared / self.server if self.server else None

    def report(self) -> dict[str, Any]:
        return {**asdict(self), "precision": self.precision, "recall": self.recall}


def compared(
    ours: Iterable[tuple[str, int]], theirs: Iterable[tuple[str, int]], definition: set[tuple[str, int]]
) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """Both sides as (path, line) sets, the definition's own lines (where it starts, where its
    name stands) left out."""
    return set(ours) - definition, set(theirs) - definition


def server_locations(result: Any, root: Path) -> set[tuple[str, int]]:
    """An LSP references result as (path relative to root, 1-based line), inside root only."""
    out: set[tuple[str, int]] = set()
    for loc in result or []:
        uri = loc.get("uri") or loc.get("targetUri", "")
        rng = loc.get("range") or loc.get("targetSelectionRange")
        if not uri.startswith("file:") or rng is None:
            continue
        path = Path(unquote(urlparse(uri).path))
        try:
            rel = path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            continue
        out.add((rel, rng["start"]["line"] + 1))
    return out


def fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


# -- repositories ------------------------------------------------------------------------------


def licence_of(root: Path) -> str:
    """The licence named by the repository's licence file (a guess from its words)."""
    files = sorted(p for p in root.iterdir() if re.match(r"(?i)(licen[cs]e|copying)", p.name) and p.is_file())
    if not files:
        return "unknown (no licence file)"
    text = " ".join(files[0].read_text(errors="replace").split())[:4000]
    checks = (
        ("Apache License", "Apache-2.0"),
        ("Mozilla Public License", "MPL-2.0"),
        ("GNU LESSER GENERAL PUBLIC", "LGPL"),
        ("GNU GENERAL PUBLIC LICENSE Version 3", "GPL-3.0"),
        ("GNU GENERAL PUBLIC LICENSE Version 2", "GPL-2.0"),
        ("Permission is hereby granted, free of charge", "MIT"),
        ("Permission to use, copy, modify, and/or distribute", "ISC"),
        ("Permission to use, copy, modify, and distribute", "ISC-style"),
        ("Neither the name", "BSD-3-Clause"),
        ("Redistribution and use", "BSD-2-Clause"),
    )
    for words, spdx in checks:
        if words.lower() in text.lower():
            return f"{spdx} ({files[0].name})"
    return f"unknown ({files[0].name}: {text[:60]})"


@dataclass
class Repo:
    language: str
    source: str
    parts: list[str]
    name: str = ""
    root: Path = Path()
    commit: str | None = None
    licence: str = ""

    @classmethod
    def parse(cls, spec: str) -> Repo:
        language, _, rest = spec.partition("=")
        if language not in EXTENSIONS or not rest:
            raise SystemExit(f"--repo {spec!r}: LANGUAGE=SOURCE[:PART,...], LANGUAGE one of {sorted(EXTENSIONS)}")
        source, _, parts = rest.partition(":")
        return cls(language, source, [p for p in parts.split(",") if p])

    def checkout(self, work: Path) -> None:
        src = Path(self.source)
        is_git = (src / "HEAD").is_file() and (src / "objects").is_dir()
        self.name = (src.parent.name if src.name == "repo" else src.name).replace("+", "/")
        self.root = work / re.sub(r"[^\w.-]", "_", self.name)
        if is_git:
            self.commit = subprocess.run(
                ["git", "--git-dir", str(src), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
            ).stdout.strip()
            if not self.root.exists():
                self.root.mkdir(parents=True)
                archive = subprocess.run(
                    ["git", "--git-dir", str(src), "archive", "HEAD", *self.parts], capture_output=True, check=True
                )
                subprocess.run(["tar", "-x", "-C", str(self.root)], input=archive.stdout, check=True)
                if self.parts:  # the licence file, beside the parts
                    names = subprocess.run(
                        ["git", "--git-dir", str(src), "ls-tree", "--name-only", "HEAD"],
                        capture_output=True,
                        text=True,
                        check=True,
                    ).stdout.split()
                    for n in names:
                        if re.match(r"(?i)(licen[cs]e|copying)", n):
                            blob = subprocess.run(
                                ["git", "--git-dir", str(src), "show", f"HEAD:{n}"], capture_output=True, check=True
                            )
                            (self.root / n).write_bytes(blob.stdout)
        else:
            self.root = src.resolve()
        self.licence = licence_of(self.root)


def blocked(name: str) -> bool:
    """Whether the training blocklist or eval/sources.toml's sealed split names the project."""
    here = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(here))
    import tomllib

    from eval.goldenbuild.sources import blocklist_key, load_blocklist

    keys = load_blocklist()
    sealed = tomllib.loads((here / "eval" / "sources.toml").read_text())
    sealed_keys = {
        blocklist_key(n)
        for p in sealed.get("project", [])
        if p.get("split") == "sealed"
        for n in (p.get("name", ""), p.get("package", ""))
        if n
    }
    sealed_keys |= {
        blocklist_key(n) for n in ("alacritty", "hugo", "beets", "mongoose", "i3", "polybar", "asciidoctor")
    }
    words = {name, *name.split("/")}
    return any(blocklist_key(w) in keys or blocklist_key(w) in sealed_keys for w in words)


# -- ragls ---------------------------------------------------------------------------------------


def ragls_index(root: Path, cache: Path) -> tuple[Path, float]:
    from ragls.config import Settings
    from ragls.index.handle import manifest_of

    env = {**os.environ, "RAGLS_CACHE_DIR": str(cache)}
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "ragls", "index", "-q", str(root)], capture_output=True, text=True, env=env
    )
    if done.returncode != 0:
        raise RuntimeError(f"ragls index {root}: {done.stderr[-2000:]}")
    return manifest_of(root, Settings.model_validate({"cacheDir": str(cache)})), time.monotonic() - t0


def ragls_definitions(manifest: Path) -> list[Def]:
    db = sqlite3.connect(f"file:{manifest}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT f.path, d.name, d.kind, d.scope, d.line, d.end_line FROM graph_defs d"
            " JOIN graph_files f ON f.id = d.file"
        ).fetchall()
    finally:
        db.close()
    return [Def(*r) for r in rows]


def ragls_references(manifest: Path, d: Def) -> set[tuple[str, int]]:
    from ragls.graph.relations import references_of

    return {(loc.path, loc.line) for loc in references_of(manifest, d.symbol, d.path)}


# -- language servers ----------------------------------------------------------------------------


class Client:
    """JSON-RPC over a language server's stdio: requests with a timeout, the server's own
    requests answered (configuration, progress tokens), $/progress followed."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )
        self._id = 0
        self._lock = threading.Lock()
        self._waiting: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.progress: set[Any] = set()  # active $/progress tokens
        self.last_message = time.monotonic()
        self.indexing = False  # intelephense's own notifications
        threading.Thread(target=self._read, daemon=True).start()

    def _send(self, msg: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        assert self.proc.stdin is not None
        with self._lock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            msg = json.loads(out.read(length))
            self.last_message = time.monotonic()
            if "id" in msg and "method" in msg:
                self._answer(msg)
            elif "id" in msg:
                q = self._waiting.pop(msg["id"], None)
                if q is not None:
                    q.put(msg)
            elif msg.get("method") == "$/progress":
                token, kind = msg["params"]["token"], msg["params"]["value"].get("kind")
                if kind == "begin":
                    self.progress.add(token)
                elif kind == "end":
                    self.progress.discard(token)
            elif msg.get("method") == "indexingStarted":
                self.indexing = True
            elif msg.get("method") == "indexingEnded":
                self.indexing = False

    def _answer(self, msg: dict[str, Any]) -> None:
        method, params = msg["method"], msg.get("params") or {}
        result: Any = None
        if method == "workspace/configuration":
            result = [None for _ in params.get("items", [])]
        elif method == "workspace/workspaceFolders":
            result = self.folders
        self._send({"id": msg["id"], "result": result})

    def request(self, method: str, params: Any, timeout: float) -> Any:
        self._id += 1
        q: queue.Queue[dict[str, Any]] = queue.Queue()
        self._waiting[self._id] = q
        self._send({"id": self._id, "method": method, "params": params})
        try:
            msg = q.get(timeout=timeout)
        except queue.Empty:
            self._waiting.pop(self._id, None)
            self.notify("$/cancelRequest", {"id": self._id})
            raise TimeoutError(f"{method}: no answer in {timeout:.0f} s") from None
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return msg.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def start(self, root: Path, options: dict[str, Any] | None, timeout: float) -> None:
        self.folders = [{"uri": root.as_uri(), "name": root.name}]
        caps = {
            "window": {"workDoneProgress": True},
            "workspace": {"configuration": True, "workspaceFolders": True},
            "textDocument": {"references": {}, "synchronization": {}},
        }
        params = {
            "processId": os.getpid(),
            "rootUri": root.as_uri(),
            "rootPath": str(root),
            "workspaceFolders": self.folders,
            "capabilities": caps,
            "initializationOptions": options or {},
        }
        self.request("initialize", params, timeout)
        self.notify("initialized", {})

    def quiet(self, limit: float, still: float = 3.0) -> float:
        """Wait until no progress is active and the server said nothing for `still` seconds."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < limit:
            if not self.progress and not self.indexing and time.monotonic() - self.last_message > still:
                break
            time.sleep(0.5)
        return time.monotonic() - t0

    def stop(self) -> None:
        try:
            self.request("shutdown", None, 10)
            self.notify("exit", None)
            self.proc.wait(10)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def server_for(repo: Repo, scratch: Path) -> tuple[list[str], dict[str, Any] | None, dict[str, str]]:
    """The language server's command line, initialization options and environment."""
    lang = repo.language
    if lang == "python":
        return ["pyright-langserver", "--stdio"], None, {}
    if lang == "go":
        offline_go_mod(repo.root)
        return ["gopls"], None, {"GOPROXY": "off", "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}
    if lang in ("c", "cpp"):
        cc = scratch / "cdb"
        cc.mkdir(parents=True, exist_ok=True)
        write_compile_commands(repo.root, cc / "compile_commands.json", lang)
        return ["clangd", f"--compile-commands-dir={cc}", "--background-index", "-j=2", "--log=error"], None, {}
    if lang in ("typescript", "javascript"):
        write_jsconfig(repo.root)
        return ["typescript-language-server", "--stdio"], {"maxTsServerMemory": 4096}, {}
    if lang == "php":
        return ["intelephense", "--stdio"], {"storagePath": str(scratch / "intelephense"), "clearCache": True}, {}
    raise ValueError(lang)


def offline_go_mod(root: Path) -> None:
    """go.mod without its requirements and with a two-part go version: the module proxy cannot
    be reached here (the dependencies' packages stay unresolved, the module's own are loaded)
    and the gopls that installs from a registry reads no `go 1.23.0`."""
    mod = root / "go.mod"
    if mod.exists():
        module = re.search(r"(?m)^module\s+(\S+)", mod.read_text())
        if module:
            mod.write_text(f"module {module.group(1)}\n\ngo 1.19\n")


def write_compile_commands(root: Path, out: Path, lang: str) -> None:
    """Every source file compiled with every folder that holds a header on its include path
    (no build is run: the repositories' own configure steps are not)."""
    headers = sorted({p.parent for p in root.rglob("*") if p.suffix in (".h", ".hpp", ".hh") and p.is_file()})
    includes = [f"-I{d}" for d in [root, *headers]]
    sources = sorted(p for p in root.rglob("*") if p.suffix in (".c", ".cc", ".cpp", ".cxx") and p.is_file())
    compiler = ["clang", "-std=gnu11"] if lang == "c" else ["clang++", "-std=c++17"]
    cmds = [
        {"directory": str(p.parent), "file": str(p), "arguments": [*compiler, *includes, "-c", str(p)]} for p in sources
    ]
    out.write_text(json.dumps(cmds))


def write_jsconfig(root: Path) -> None:
    """A project over the whole folder when it has none of its own at the top (the server
    otherwise sees a file's imports, not its importers)."""
    if (root / "tsconfig.json").exists() or (root / "jsconfig.json").exists():
        return
    (root / "jsconfig.json").write_text(
        json.dumps(
            {
                "compilerOptions": {"allowJs": True, "checkJs": False, "noEmit": True, "target": "esnext"},
                "include": ["**/*"],
                "exclude": ["node_modules"],
            }
        )
    )


# -- one repository ----------------------------------------------------------------------------


@dataclass
class Outcome:
    tallies: dict[str, Tally] = field(default_factory=lambda: {"unique": Tally(), "ambiguous": Tally()})
    symbols: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def evaluate(repo: Repo, manifest: Path, unique: list[Def], ambiguous: list[Def], args: argparse.Namespace) -> Outcome:
    out = Outcome()
    with tempfile.TemporaryDirectory(prefix="ga-lsp-") as scratch:
        argv, options, env = server_for(repo, Path(scratch))
        client = Client(argv, repo.root, env)
        try:
            client.start(repo.root, options, args.timeout * 4)
            opened: set[str] = set()
            first = True
            for group, defs in (("unique", unique), ("ambiguous", ambiguous)):
                for d in defs:
                    file = repo.root / d.path
                    text = file.read_text(errors="replace")
                    pos = name_position(text.splitlines(), d.name, d.line, d.end_line)
                    if pos is None:
                        out.errors.append(f"{d.path}:{d.line}: {d.name!r} not found at its definition")
                        continue
                    uri = file.as_uri()
                    if d.path not in opened:
                        lang_id = LANGUAGE_IDS.get(file.suffix, repo.language)
                        if repo.language == "cpp" and file.suffix == ".h":
                            lang_id = "cpp"
                        item = {"uri": uri, "languageId": lang_id, "version": 1, "text": text}
                        client.notify("textDocument/didOpen", {"textDocument": item})
                        opened.add(d.path)
                    params = {
                        "textDocument": {"uri": uri},
                        "position": {"line": pos[0], "character": pos[1]},
                        "context": {"includeDeclaration": False},
                    }
                    if first:  # the server loads the project: wait for it, then until answers settle
                        first = False
                        waited = client.quiet(args.load_timeout)
                        previous = None
                        while waited < args.load_timeout:
                            now = server_locations(
                                client.request("textDocument/references", params, args.load_timeout), repo.root
                            )
                            if now == previous:
                                break
                            previous = now
                            time.sleep(5)
                            waited += 5 + client.quiet(args.load_timeout - waited)
                        print(f"  {repo.name}: server ready after {waited:.0f} s", flush=True)
                    try:
                        theirs = server_locations(
                            client.request("textDocument/references", params, args.timeout), repo.root
                        )
                    except (TimeoutError, RuntimeError) as e:
                        out.errors.append(f"{d.path}:{d.line} {d.symbol}: {e}")
                        continue
                    own = {(d.path, d.line), (d.path, pos[0] + 1)}
                    ours, theirs = compared(ragls_references(manifest, d), theirs, own)
                    out.tallies[group].add(ours, theirs)
                    out.symbols.append(
                        {
                            "group": group,
                            "symbol": d.symbol,
                            "kind": d.kind,
                            "path": d.path,
                            "line": pos[0] + 1,
                            "ragls": len(ours),
                            "server": len(theirs),
                            "shared": len(ours & theirs),
                            "missed": sorted(theirs - ours),
                            "extra": sorted(ours - theirs),
                            "definition_line": d.line,
                            "server_locations": sorted(theirs),
                        }
                    )
        finally:
            client.stop()
    return out


def table(rows: list[tuple[str, int, Tally, Tally]]) -> str:
    head = (
        "| language | repos | symbols (with refs) | P unique | R unique | ambiguous (with refs) | P ambiguous | R ambiguous |\n"
        "|---|---|---|---|---|---|---|---|\n"
    )
    body = "".join(
        f"| {lang} | {n} | {u.symbols} ({u.with_references}) | {fmt(u.precision)} | {fmt(u.recall)} "
        f"| {a.symbols} ({a.with_references}) | {fmt(a.precision)} | {fmt(a.recall)} |\n"
        for lang, n, u, a in rows
    )
    return head + body


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--repo", action="append", default=[], help="LANGUAGE=SOURCE[:PART,...] (repeat)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "graph-accuracy")
    p.add_argument("--unique", type=int, default=35, help="uniquely named symbols per repository")
    p.add_argument("--ambiguous", type=int, default=12, help="ambiguous symbols per repository")
    p.add_argument("--seed", type=int, default=53)
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per references request")
    p.add_argument("--load-timeout", type=float, default=180.0, help="seconds for a server to load a project")
    p.add_argument("--rescore", action="store_true", help="re-score --out's stored run with today's ragls (above)")
    args = p.parse_args(argv)
    if args.rescore:
        rescore(args)
        return
    if not args.repo:
        p.error("give --repo (or --rescore)")

    repos = [Repo.parse(s) for s in args.repo]
    for tool in ("git", "tar"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is needed")
    results: list[dict[str, Any]] = []
    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    done = {(r["language"], r["repository"]): r for r in previous.get("repositories", [])}
    for repo in repos:
        repo.checkout(args.work / "src")
        if blocked(repo.name):
            raise SystemExit(f"{repo.name} is sealed or blocklisted: never to be used")
        if (repo.language, repo.name) in done and done[(repo.language, repo.name)].get("commit") == repo.commit:
            print(f"{repo.language} {repo.name}: kept from {args.out}", flush=True)
            results.append(done[(repo.language, repo.name)])
            continue
        print(f"{repo.language} {repo.name}: indexing", flush=True)
        manifest, index_s = ragls_index(repo.root, args.work / "cache")
        unique, ambiguous = sample(
            ragls_definitions(manifest), EXTENSIONS[repo.language], args.unique, args.ambiguous, args.seed
        )
        t0 = time.monotonic()
        try:
            outcome = evaluate(repo, manifest, unique, ambiguous, args)
        except (TimeoutError, RuntimeError, OSError) as e:  # the server never answered: said, not hidden
            outcome = Outcome(errors=[f"language server: {e}"])
        u, a = outcome.tallies["unique"], outcome.tallies["ambiguous"]
        print(
            f"  unique {u.symbols}: P {fmt(u.precision)} R {fmt(u.recall)}; ambiguous {a.symbols}: "
            f"P {fmt(a.precision)} R {fmt(a.recall)}; {len(outcome.errors)} errors; {time.monotonic() - t0:.0f} s",
            flush=True,
        )
        results.append(
            {
                "language": repo.language,
                "repository": repo.name,
                "parts": repo.parts,
                "commit": repo.commit,
                "licence": repo.licence,
                "index_s": round(index_s, 1),
                "unique": u.report(),
                "ambiguous": a.report(),
                "errors": outcome.errors,
                "symbols": outcome.symbols,
            }
        )
        write(args, results, show=False)
    write(args, results)


def rescore(args: argparse.Namespace) -> None:
    """ragls's side of every stored symbol again, from the indexes under --work, against the
    server's stored locations; the run's file is rewritten with the new tallies (its symbols'
    `ragls`, `shared`, `missed`, `extra` too) and the table printed."""
    from ragls.config import Settings
    from ragls.index.handle import manifest_of

    stored = json.loads(args.out.read_text())
    settings = Settings.model_validate({"cacheDir": str(args.work / "cache")})
    for r in stored["repositories"]:
        root = args.work / "src" / re.sub(r"[^\w.-]", "_", r["repository"])
        manifest = manifest_of(root, settings)
        if not manifest.is_file():
            raise SystemExit(f"{r['repository']}: no index under {args.work} (run without --rescore first)")
        tallies = {"unique": Tally(), "ambiguous": Tally()}
        for sym in r["symbols"]:
            if "server_locations" not in sym:
                raise SystemExit(f"{args.out} holds no server answers (a run before --rescore existed)")
            theirs = {(p, line) for p, line in sym["server_locations"]}
            own = {(sym["path"], sym["definition_line"]), (sym["path"], sym["line"])}
            d = Def(sym["path"], sym["symbol"].rpartition(".")[2], sym["kind"], sym["symbol"].rpartition(".")[0], 0, 0)
            ours, theirs = compared(ragls_references(manifest, d), theirs, own)
            tallies[sym["group"]].add(ours, theirs)
            sym.update(
                ragls=len(ours), shared=len(ours & theirs), missed=sorted(theirs - ours), extra=sorted(ours - theirs)
            )
        r["unique"], r["ambiguous"] = tallies["unique"].report(), tallies["ambiguous"].report()
    args.seed = stored.get("seed", args.seed)
    write(args, stored["repositories"], servers=stored.get("servers"))


def write(
    args: argparse.Namespace, results: list[dict[str, Any]], show: bool = True, servers: dict[str, str] | None = None
) -> None:
    by_lang: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_lang.setdefault(r["language"], []).append(r)
    rows = []
    languages: dict[str, Any] = {}
    for lang, rs in by_lang.items():
        u, a = Tally(), Tally()
        for r in rs:
            u.merge(tally_of(r["unique"]))
            a.merge(tally_of(r["ambiguous"]))
        rows.append((lang, len(rs), u, a))
        languages[lang] = {"repositories": [r["repository"] for r in rs], "unique": u.report(), "ambiguous": a.report()}
    text = table(rows)
    args.out.write_text(
        json.dumps(
            {
                "command": " ".join(sys.argv),
                "seed": args.seed,
                "servers": servers or server_versions(set(by_lang)),
                "languages": languages,
                "repositories": results,
            },
            indent=1,
        )
    )
    if show:
        print(text, flush=True)


def tally_of(report: dict[str, Any]) -> Tally:
    return Tally(**{k: report[k] for k in ("symbols", "with_references", "shared", "ragls", "server")})


def server_versions(languages: set[str]) -> dict[str, str]:
    probes = {
        "python": ["pyright", "--version"],
        "go": ["gopls", "version"],
        "c": ["clangd", "--version"],
        "cpp": ["clangd", "--version"],
        "typescript": ["typescript-language-server", "--version"],
        "javascript": ["typescript-language-server", "--version"],
        "php": ["intelephense", "--version"],
    }
    out = {}
    for lang in sorted(languages):
        try:
            done = subprocess.run(probes[lang], capture_output=True, text=True, timeout=30)
            out[lang] = (done.stdout or done.stderr).strip().splitlines()[0]
        except (OSError, subprocess.TimeoutExpired, IndexError):
            out[lang] = "unknown"
    return out


if __name__ == "__main__":
    main()
