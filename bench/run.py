"""`make bench`: performance of the real ragls server, driven over LSP on stdio.

    python -m bench.run --out DIR [--sizes 10k,files10k,chunks150k,50k] [--quick] [--no-docs]

For each size (bench/corpus.toml) it builds a fresh workspace from pinned, checksummed
packages, starts `ragls` with an empty cache and measures, in one run: time to the first
lexical hit, time to dense-complete (`ready`), the raw embedder's throughput on the same kind
of chunks, the overhead ratio, rag/retrieve latency while indexing and idle, save-to-
searchable latency, warm restart time, peak RSS and index size. Results go to DIR/bench.json
and into the table of docs/performance.md. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import secrets
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.corpus import Workspace, build_workspace, default_cache, load_corpus, window_sample
from bench.lsp import LspClient, children_rss, cpu_seconds, proc_status
from bench.snapimport import measure_import

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "performance.md"

TARGETS = {
    "overhead_ratio": ("<=", 1.15),
    "warm_restart_s": ("<", 2.0),
    "save_to_searchable_p95_ms": ("<", 1000.0),
    "retrieve_indexing_p95_ms": ("<", 50.0),
    "peak_rss_mb": ("<", 1024.0),  # stated for 50k chunks
    "first_lexical_s": ("<", 15.0),  # stated for a 10k-file repository
}


def log(msg: str) -> None:
    print(f"[{datetime.now().strftime('%H:%M:%S')}] {msg}", flush=True)


def pct(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100)."""
    if not values:
        return None
    s = sorted(values)
    return s[max(0, math.ceil(q / 100 * len(s)) - 1)]


def summary(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50": round(pct(values, 50) or 0, 2),
        "p95": round(pct(values, 95) or 0, 2),
        "max": round(max(values), 2),
        "mean": round(statistics.fmean(values), 2),
    }


def server_command() -> list[str]:
    exe = Path(sys.executable).with_name("ragls")
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "ragls"]


def dir_size(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, f)).st_blocks * 512
    return total


class MachineLoad:
    """CPU used by the whole machine between two points, to show how shared it was."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.busy0 = self._busy()

    @staticmethod
    def _busy() -> float:
        with open("/proc/stat", encoding="ascii") as fh:
            parts = [int(x) for x in fh.readline().split()[1:]]
        idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
        return (sum(parts[:8]) - idle) / os.sysconf("SC_CLK_TCK")

    def cores_busy(self) -> float:
        """Average number of busy cores since construction."""
        dt = time.monotonic() - self.t0
        return (self._busy() - self.busy0) / dt if dt > 0 else 0.0


def raw_throughput(
    ws: Workspace, out: Path, nice: int, repeat: int = 1, window: list[str] | None = None
) -> dict[str, Any]:
    """The raw embedder on the workspace's random chunk sample, or on `window`: a sample of the
    chunks a dense window embedded."""
    texts = out / f"sample-{ws.name}{'-window' if window else ''}.json"
    if window or not texts.is_file():
        texts.write_text(json.dumps(window or ws.sample_texts), "utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "bench.rawembed", str(texts), "--nice", str(nice), "--repeat", str(repeat)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=1800,
    )
    if r.returncode:
        raise RuntimeError(f"bench.rawembed failed: {r.stderr[-2000:]}")
    res = json.loads(r.stdout.strip().splitlines()[-1])
    log(
        f"  raw embedder{' (window chunks)' if window else ''}: {res['chunks_per_s_median']} chunks/s ({res['chunks']} chunks, "
        f"{res['tokens_mean']} tokens mean, nice {nice})"
    )
    return res


class Server:
    """One ragls process on a workspace, with its cache dir."""

    def __init__(self, ws: Workspace, cache_dir: Path, out: Path, label: str) -> None:
        self.ws = ws
        self.cache_dir = cache_dir
        self.stderr = out / f"server-{ws.name}.log"
        self.label = label
        self.client: LspClient | None = None
        self.t_spawn = 0.0
        self.t_init = 0.0
        self.workers_peak = 0  # MB: the largest sum of the RSS of the server's child processes seen
        self.together_peak = 0  # MB: the largest server + workers RSS of one sample
        self.together_at: dict[str, Any] = {}  # that sample: when, in which phase, the two parts

    async def start(self, init_options: dict[str, Any] | None = None) -> LspClient:
        env = {**os.environ, "RAGLS_CACHE_DIR": str(self.cache_dir)}
        with self.stderr.open("a") as fh:
            fh.write(f"\n===== {self.label} {datetime.now().isoformat()} =====\n")
        self.t_spawn = time.monotonic()
        self.client = await LspClient.spawn(server_command(), env, self.stderr)
        self.t_init = await self.client.initialize(self.ws.root, init_options)
        return self.client

    async def wait_ready(
        self, interval: float, timeout: float, on_poll=None, searchable: bool = False
    ) -> tuple[float, dict[str, Any]]:  # type: ignore[no-untyped-def]
        assert self.client is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            st = await self.client.status()
            now = time.monotonic()
            if on_poll is not None:
                on_poll(now, st)
            if st["state"] == "ready":
                return now, st
            lex = st["lexical"]
            if searchable and st["phase"] in ("dense", "idle") and lex["total"] and lex["done"] >= lex["total"]:
                return now, st
            if st["state"] == "error":
                raise RuntimeError(f"server error: {st.get('message')}")
            await asyncio.sleep(interval)
        raise TimeoutError(f"not ready after {timeout:.0f}s")


def _status_row(t: float, st: dict[str, Any]) -> dict[str, Any]:
    return {
        "t": round(t, 3),
        "phase": st["phase"],
        "lexical": st["lexical"]["done"],
        "dense": st["dense"]["done"],
        "files": st["filesTotal"],
        "chunks": st["chunks"],
        "embedded": st.get("embedded", 0),
    }


async def cold_index(
    ws: Workspace, srv: Server, res: dict[str, Any], args: argparse.Namespace, stop_after_lexical: bool
) -> None:
    """Start on an empty cache; time probes, phases and queries until ready (or lexical)."""
    load = MachineLoad()
    client = await srv.start()
    t0 = srv.t_init
    timeline: list[dict[str, Any]] = []
    marks: dict[str, float] = {}
    lexical_lat: list[float] = []
    status_lat: list[float] = []
    slow: list[tuple[float, float, str]] = []  # (ms, seconds from initialized, request): the worst go in the report
    recall_found: dict[str, float] = {}
    dense_lat: list[float] = []
    dense_took: list[float] = []
    done = asyncio.Event()

    def on_status(now: float, st: dict[str, Any]) -> None:
        timeline.append(_status_row(now - t0, st))
        total = st["filesTotal"]
        if (
            "lexical_done" not in marks
            and st["phase"] in ("dense", "idle")
            and total
            and st["lexical"]["done"] >= total - st["filesFailed"]
        ):
            marks["lexical_done"] = now
        timeline[-1]["rss_mb"] = round(proc_status(client.pid).get("VmRSS", 0) / 2**20)
        kids = children_rss(client.pid)
        timeline[-1]["workers_rss_mb"] = round(kids / 2**20)
        srv.workers_peak = max(srv.workers_peak, round(kids / 2**20))
        # The two peaks above come at different times (the workers run during the lexical pass,
        # the server peaks later): their sum overstates what the machine held at once.
        together = timeline[-1]["rss_mb"] + timeline[-1]["workers_rss_mb"]
        if together > srv.together_peak:
            srv.together_peak = together
            srv.together_at = {k: timeline[-1][k] for k in ("t", "phase", "rss_mb", "workers_rss_mb")}

    async def probes() -> None:
        while True:
            for key, probe in (("first_hit", ws.probe_first), ("last_hit", ws.probe_last)):
                if key in marks:
                    continue
                ms, r = await client.retrieve(probe.query)
                now = time.monotonic()
                lexical_lat.append(ms)
                slow.append((ms, now - t0, "retrieve"))
                if "any_result" not in marks and r.get("chunks"):
                    marks["any_result"] = now
                if probe.found_in(r):
                    marks[key] = now
            if "first_hit" in marks and "last_hit" in marks:
                return
            await asyncio.sleep(0.1)

    async def recall() -> None:
        # 30 identifiers defined all over the workspace, each asked until found: the share of
        # the repository that is lexically searchable, and when it reaches 0.9.
        todo = list(ws.recall_probes)
        while todo:
            for probe in list(todo):
                ms, r = await client.retrieve(probe.query)
                lexical_lat.append(ms)
                slow.append((ms, time.monotonic() - t0, "retrieve"))
                if probe.found_in(r):
                    recall_found[probe.query] = time.monotonic()
                    todo.remove(probe)
            if len(recall_found) >= math.ceil(0.9 * len(ws.recall_probes)) and "recall_90" not in marks:
                marks["recall_90"] = time.monotonic()
            await asyncio.sleep(0.5)
        marks["recall_all"] = time.monotonic()

    async def dense_queries() -> None:
        # One query a second during the dense backfill: the load an active chat user makes.
        i = 0
        while not done.is_set():
            if "lexical_done" in marks and "last_hit" in marks:
                ms, r = await client.retrieve(ws.queries[i % len(ws.queries)])
                if not done.is_set():
                    dense_lat.append(ms)
                    dense_took.append(float(r.get("tookMs") or 0))
                i += 1
            await asyncio.sleep(args.dense_query_interval)

    progress_file = srv.stderr.with_name(f"progress-{ws.name}.json")
    last_dump = 0.0

    def dump_progress(now: float) -> None:
        # Partial results, so that a run stopped half-way still leaves its numbers behind.
        data = {
            "marks_s": {k: round(v - t0, 3) for k, v in marks.items()},
            "elapsed_s": round(now - t0, 1),
            "vm": proc_status(client.pid),
            "server_cpu_s": cpu_seconds(client.pid),
            "retrieve_lexical_ms": summary(lexical_lat),
            "retrieve_indexing_ms": summary(dense_lat),
            "timeline": timeline[-50:],
        }
        progress_file.write_text(json.dumps(data, indent=1), "utf-8")

    async def status_loop() -> None:
        nonlocal last_dump
        while True:
            t_req = time.perf_counter()
            st = await client.status()
            status_lat.append((time.perf_counter() - t_req) * 1000)
            now = time.monotonic()
            slow.append((status_lat[-1], now - t0, "status"))
            on_status(now, st)
            if now - last_dump > 30:
                dump_progress(now)
                last_dump = now
            searchable = "lexical_done" in marks and "first_hit" in marks and "last_hit" in marks
            if stop_after_lexical and searchable and (not ws.recall_probes or "recall_all" in marks):
                if "window_start" not in marks:
                    # Keep going for a while into the dense pass: its rate against the raw embedder.
                    marks["window_start"] = now
                    embedded_at[0] = st.get("embedded", 0)
                    window_cpu[0] = (cpu_seconds(client.pid) or 0.0, time.process_time(), MachineLoad())
                if now - marks["window_start"] >= args.dense_window:
                    embedded_at[1] = st.get("embedded", 0)
                    marks["window_end"] = now
                    window_cpu[1] = (cpu_seconds(client.pid) or 0.0, time.process_time(), window_cpu[0][2].cores_busy())
                    return
            if st["state"] == "ready":
                marks["ready"] = now
                return
            if st["state"] == "error":
                raise RuntimeError(f"server error: {st.get('message')}")
            if now - t0 > args.timeout:
                raise TimeoutError(f"{ws.name}: not ready after {args.timeout}s")
            await asyncio.sleep(0.2)

    embedded_at = [0, 0]
    # (server CPU s, this bench client's CPU s, machine load) at the dense window's start and end:
    # where the cores went while the window embedded (the raw embedder runs alone).
    window_cpu: list[Any] = [None, None]
    tasks = [asyncio.create_task(probes()), asyncio.create_task(dense_queries())]
    if ws.recall_probes:
        tasks.append(asyncio.create_task(recall()))
    try:
        await status_loop()
        done.set()
        if not stop_after_lexical:
            await asyncio.wait_for(tasks[0], 60)  # the probes must have been found by now
    finally:
        done.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    st = await client.status()
    mem = proc_status(client.pid)
    cpu = cpu_seconds(client.pid)
    end = marks.get("ready", time.monotonic())
    rel = {k: round(v - t0, 3) for k, v in marks.items()}
    res["status"] = {
        k: st[k]
        for k in (
            "state",
            "phase",
            "filesTotal",
            "filesIndexed",
            "filesFailed",
            "filesSkipped",
            "skippedByReason",
            "chunks",
            "embedded",
            "cache",
        )
    }
    res["files"] = st["filesTotal"]
    res["chunks"] = st["chunks"]
    res["first_lexical_s"] = rel.get("first_hit")
    res["last_probe_lexical_s"] = rel.get("last_hit")
    res["any_result_s"] = rel.get("any_result")
    res["lexical_done_s"] = rel.get("lexical_done")
    res["probes"] = {"first": asdict(ws.probe_first), "last": asdict(ws.probe_last)}
    res["retrieve_lexical_ms"] = summary(lexical_lat)
    res["status_ms"] = summary(status_lat)
    res["slowest_requests"] = [
        {"ms": round(ms, 1), "at_s": round(at, 2), "request": kind} for ms, at, kind in sorted(slow, reverse=True)[:15]
    ]
    # The status's own slowest: retrieves fill the list above.
    res["slowest_status"] = [
        {"ms": round(ms, 1), "at_s": round(at, 2)} for ms, at, kind in sorted(slow, reverse=True) if kind == "status"
    ][:5]
    res["initialize_s"] = round(srv.t_init - srv.t_spawn, 3)
    res["server_workers"] = srv.workers_peak
    res["server_and_workers_mb"] = srv.together_peak
    res["server_and_workers_at"] = srv.together_at
    if ws.recall_probes:
        res["recall_probes"] = len(ws.recall_probes)
        res["recall_found_s"] = sorted(round(t - t0, 2) for t in recall_found.values())
        res["recall_90_s"] = rel.get("recall_90")
    if "window_end" in marks:
        span = marks["window_end"] - marks["window_start"]
        res["dense_window"] = {
            "start_s": rel["window_start"],
            "seconds": round(span, 1),
            "embedded": embedded_at[1] - embedded_at[0],
            "embedded_from": embedded_at[0],
            "embedded_to": embedded_at[1],
            "chunks_per_s": round((embedded_at[1] - embedded_at[0]) / span, 2) if span else None,
        }
        if window_cpu[1] is not None and span:
            (srv0, cli0, _), (srv1, cli1, machine) = window_cpu
            res["dense_window"] |= {
                "server_cores": round((srv1 - srv0) / span, 2),
                "bench_client_cores": round((cli1 - cli0) / span, 2),
                "machine_cores": round(machine, 2),
            }
    res["peak_rss_cold_mb"] = round(mem.get("VmHWM", 0) / 2**20, 1)
    res["rss_at_end_mb"] = round(mem.get("VmRSS", 0) / 2**20, 1)
    res["server_cpu_s"] = round(cpu, 1) if cpu is not None else None
    busy = load.cores_busy()
    res["machine_cores_busy"] = round(busy, 2)
    if cpu is not None:
        # Everything else that ran on the machine meanwhile (other helpers' tests, this client).
        res["other_cores_busy"] = round(max(0.0, busy - cpu / (time.monotonic() - srv.t_spawn)), 2)
    res["timeline"] = timeline[:: max(1, len(timeline) // 400)]
    res["retrieve_indexing_ms"] = summary(dense_lat)
    if not stop_after_lexical:
        res["dense_complete_s"] = rel.get("ready")
        res["dense_phase_s"] = round(end - marks["lexical_done"], 2) if "lexical_done" in marks else None
        res["retrieve_indexing_server_ms"] = summary(dense_took)
    res["index_bytes"] = dir_size(srv.cache_dir / "index")
    res["embedding_cache_bytes"] = dir_size(srv.cache_dir) - res["index_bytes"]


async def idle_queries(ws: Workspace, client: LspClient, n: int) -> tuple[list[float], list[float]]:
    lat, took = [], []
    for i in range(n):
        ms, r = await client.retrieve(ws.queries[i % len(ws.queries)])
        lat.append(ms)
        took.append(float(r.get("tookMs") or 0))
        await asyncio.sleep(0.02)
    return lat, took


PROBE_SOURCE = '''"""Benchmark probe {i}: a new function written by an editor save."""


def {name}(records, limit=10):
    """Return the first `limit` records whose score is above the mean score."""
    if not records:
        return []
    mean = sum(r.score for r in records) / len(records)
    picked = [r for r in records if r.score > mean]
    picked.sort(key=lambda r: r.score, reverse=True)
    return picked[:limit]
'''


async def save_to_searchable(ws: Workspace, srv: Server, n: int) -> dict[str, Any]:
    """Write a file with a new function name, poll rag/retrieve every 20 ms until it is found."""
    client = srv.client
    assert client is not None
    folder = ws.root / "ragls_bench_probe"
    folder.mkdir(exist_ok=True)
    token = secrets.token_hex(3)
    lat: list[float] = []
    polls: list[int] = []
    missed = 0
    for i in range(n):
        name = f"bench_probe_{token}_{i}_select"
        path = folder / f"probe_{i:03d}.py"
        t0 = time.perf_counter()
        path.write_text(PROBE_SOURCE.format(i=i, name=name), "utf-8")
        k = 0
        while True:
            k += 1
            _, r = await client.retrieve(name, topK=5)
            if any(name in (c.get("content") or "") for c in r.get("chunks") or []):
                lat.append((time.perf_counter() - t0) * 1000)
                polls.append(k)
                break
            if time.perf_counter() - t0 > 30:
                missed += 1
                break
            await asyncio.sleep(0.02)
        await srv.wait_ready(0.05, 60)  # let the new chunk's dense vector land before the next save
        await asyncio.sleep(0.2)
    shutil.rmtree(folder)
    # Wait until the deletions are indexed, so the workspace is unchanged for the warm restarts.
    last = f"bench_probe_{token}_{n - 1}_select"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        _, r = await client.retrieve(last, topK=5)
        if not any(last in (c.get("content") or "") for c in r.get("chunks") or []):
            break
        await asyncio.sleep(0.05)
    await srv.wait_ready(0.05, 60)
    out = summary(lat)
    out["missed"] = missed
    out["polls_median"] = statistics.median(polls) if polls else None
    out["samples_ms"] = [round(x, 1) for x in lat]
    return out


async def warm_restarts(ws: Workspace, out: Path, cache_dir: Path, n: int, until: str = "ready") -> dict[str, Any]:
    """Restart on the same cache. `until`: "ready" (every chunk dense) or "searchable" (every
    file lexical, for the lexical-only sizes whose dense pass is not finished)."""
    spawn_to_ready, init_to_ready, first_query, rss = [], [], [], []
    embedded = []
    for k in range(n):
        srv = Server(ws, cache_dir, out, f"warm restart {k + 1}")
        client = await srv.start()
        try:
            t_ready, st = await srv.wait_ready(0.02, 300, searchable=until == "searchable")
            spawn_to_ready.append(t_ready - srv.t_spawn)
            init_to_ready.append(t_ready - srv.t_init)
            embedded.append(st.get("embedded", 0))
            ms, _ = await client.retrieve(ws.queries[0])
            first_query.append(ms)
            rss.append(proc_status(client.pid).get("VmHWM", 0) / 2**20)
        finally:
            await client.close()
    return {
        "spawn_to_ready_s": summary(spawn_to_ready),
        "initialized_to_ready_s": summary(init_to_ready),
        "first_query_ms": summary(first_query),
        "peak_rss_mb": round(max(rss), 1),
        "embedded_on_restart": embedded,
        "n": n,
    }


async def snapshot_start(ws: Workspace, out: Path, cache_dir: Path, changed_share: float = 0.01) -> dict[str, Any]:
    """A fresh clone of the next commit with the previous commit's snapshot (issue: full quality
    in seconds): export a snapshot from the finished index, change `changed_share` of the files
    (a function appended to each), start a server on an empty cache with `embedder.snapshot`
    set, and time `initialized` -> 99 % of the files dense and -> ready. The files are put back
    afterwards."""
    snap = out / f"{ws.name}.ragls-snapshot"
    env = {**os.environ, "RAGLS_CACHE_DIR": str(cache_dir)}
    t0 = time.monotonic()
    done = subprocess.run(
        [str(REPO / ".venv/bin/ragls"), "snapshot", "export", str(ws.root), "-o", str(snap)],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        return {"error": f"ragls snapshot export exited {done.returncode}: {tail}"}
    export_s = time.monotonic() - t0
    files = sorted(p for p in ws.root.rglob("*.py") if p.is_file())
    changed = files[:: max(1, round(1 / changed_share))] if files else []
    saved = {p: p.read_bytes() for p in changed}
    fresh = cache_dir.parent / f"{cache_dir.name}-snapshot-clone"
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    srv = Server(ws, fresh, out, "fresh clone with a snapshot")
    res: dict[str, Any] = {
        "snapshot_bytes": snap.stat().st_size,
        "export_s": round(export_s, 2),
        "changed_files": len(changed),
    }
    # `ragls snapshot import` of it into an empty cache: seconds and peak RSS (a batch at a time,
    # not the file; python -m bench.snapimport does the same for a 231 MiB file).
    imported = cache_dir.parent / f"{cache_dir.name}-snapshot-import"
    shutil.rmtree(imported, ignore_errors=True)
    imported.mkdir(mode=0o700, parents=True)
    res["import"] = measure_import(snap, imported)
    shutil.rmtree(imported, ignore_errors=True)
    try:
        for k, p in enumerate(changed):
            p.write_bytes(saved[p] + f"\n\ndef snapshot_bench_edit_{k}(x):\n    return x * {k}\n".encode())
        client = await srv.start({"embedder": {"snapshot": str(snap)}})
        dense99: float | None = None
        deadline = time.monotonic() + 1800
        st: dict[str, Any] = {}
        while time.monotonic() < deadline:
            st = await client.status()
            now = time.monotonic()
            d = st["dense"]
            if dense99 is None and d["total"] and d["done"] >= 0.99 * d["total"]:
                dense99 = now - srv.t_init
            if st["state"] in ("ready", "error"):
                break
            await asyncio.sleep(0.2)
        res |= {
            "dense_99_s": None if dense99 is None else round(dense99, 2),
            "ready_s": round(time.monotonic() - srv.t_init, 2),
            "state": st.get("state"),
            "snapshot": st.get("snapshot"),
            "embedded": st.get("embedded"),
            "chunks": st.get("chunks"),
        }
        if st.get("chunks"):
            res["bytes_per_chunk"] = round(res["snapshot_bytes"] / st["chunks"], 1)
        await client.close()
    finally:
        for p, data in saved.items():
            p.write_bytes(data)
        shutil.rmtree(fresh, ignore_errors=True)
        snap.unlink(missing_ok=True)
    return res


async def run_size(ws: Workspace, out: Path, args: argparse.Namespace, raw_cache: dict[str, Any]) -> dict[str, Any]:
    res: dict[str, Any] = {
        "size": ws.name,
        "workspace": {
            "files": ws.files,
            "chunks": ws.chunks,
            "bytes": ws.bytes,
            "by_language": ws.by_language,
            "by_package": ws.by_package,
            "packages": ws.packages,
        },
    }
    cache_dir = args.cache / "runs" / ws.name
    if cache_dir.exists():
        shutil.rmtree(cache_dir)
    cache_dir.mkdir(parents=True)
    if ws.lexical_only:
        srv = Server(ws, cache_dir, out, "cold (lexical only)")
        try:
            await cold_index(ws, srv, res, args, stop_after_lexical=True)
        finally:
            if srv.client is not None:
                await srv.client.close()
        # Right after the window, on the kind of chunks it embedded: the least load drift.
        win = res.get("dense_window") or {}
        texts = window_sample(ws, win.get("embedded_from", 0), win.get("embedded_to", 0)) if win else []
        raw_window = raw_throughput(ws, out, args.nice, 1, window=texts) if texts else None
        log(f"  warm restarts x{args.restarts} (to all-lexical)")
        res["warm_restart"] = await warm_restarts(ws, out, cache_dir, args.restarts, until="searchable")
        res["warm_restart_s"] = res["warm_restart"]["spawn_to_ready_s"]["p50"]
        raw_run = raw_throughput(ws, out, args.nice, 1)
        res["raw_embedder"] = {
            "chunks_per_s": [raw_run["chunks_per_s_median"]],
            "median": raw_run["chunks_per_s_median"],
        }
        raw = raw_cache.get("rate") or raw_run["chunks_per_s_median"]
        if raw:
            res["dense_estimate_s"] = round(res["chunks"] / raw, 0)
        window = res.get("dense_window") or {}
        if window.get("chunks_per_s"):
            same = raw_window or raw_run
            window["raw_chunks_per_s"] = same["chunks_per_s_median"]
            window["raw_tokens_mean"] = same["tokens_mean"]
            window["vs_raw"] = round(window["chunks_per_s"] / same["chunks_per_s_median"], 3)
        shutil.rmtree(cache_dir, ignore_errors=True)
        return res

    raws = [raw_throughput(ws, out, args.nice, 1)]
    srv = Server(ws, cache_dir, out, "cold")
    try:
        log(f"  cold index of {ws.name} ({ws.files} files, ~{ws.chunks} chunks)")
        await cold_index(ws, srv, res, args, stop_after_lexical=False)
        log(
            f"  ready after {res['dense_complete_s']:.1f}s (first lexical hit {res['first_lexical_s']}s, "
            f"all lexical {res['lexical_done_s']}s)"
        )
        assert srv.client is not None
        lat, took = await idle_queries(ws, srv.client, args.idle_queries)
        res["retrieve_idle_ms"] = summary(lat)
        res["retrieve_idle_server_ms"] = summary(took)
        raws.append(raw_throughput(ws, out, args.nice, 1))
        log(f"  save-to-searchable x{args.saves}")
        res["save_to_searchable_ms"] = await save_to_searchable(ws, srv, args.saves)
        res["peak_rss_mb"] = round(proc_status(srv.client.pid).get("VmHWM", 0) / 2**20, 1)
    finally:
        if srv.client is not None:
            t = time.monotonic()
            await srv.client.close()
            res["shutdown_s"] = round(time.monotonic() - t, 2)
    log(f"  warm restarts x{args.restarts}")
    res["warm_restart"] = await warm_restarts(ws, out, cache_dir, args.restarts)
    log("  fresh clone of the next commit with a snapshot")
    # A failure here is reported in bench.json, not raised: the cold run's figures are kept.
    res["snapshot_start"] = await snapshot_start(ws, out, cache_dir)
    log(f"  {res['snapshot_start']}")
    raws.append(raw_throughput(ws, out, args.nice, 1))

    rates = [r["chunks_per_s_median"] for r in raws]
    raw = statistics.median(rates)
    raw_cache["rate"] = raw
    res["raw_embedder"] = {
        "chunks_per_s": rates,
        "median": raw,
        "sample": raws[0]["chunks"],
        "tokens_mean": raws[0]["tokens_mean"],
        "nice": args.nice,
        "cpu_s_per_chunk": statistics.median(r["cpu_s_per_chunk"] for r in raws),
    }
    ideal = res["chunks"] / raw
    res["ideal_embed_s"] = round(ideal, 1)
    res["overhead_ratio"] = round(res["dense_complete_s"] / ideal, 3)
    if res.get("server_cpu_s"):
        res["cpu_overhead_ratio"] = round(
            res["server_cpu_s"] / (res["chunks"] * res["raw_embedder"]["cpu_s_per_chunk"]), 3
        )
    if res.get("dense_phase_s"):
        res["dense_phase_chunks_per_s"] = round(res["chunks"] / res["dense_phase_s"], 2)
    res["warm_restart_s"] = res["warm_restart"]["spawn_to_ready_s"]["p50"]
    if not args.keep:
        shutil.rmtree(cache_dir, ignore_errors=True)
    return res


# ------------------------------------------------------------------------------------ report


def verdict(key: str, value: float | None) -> str:
    if value is None:
        return "–"
    op, target = TARGETS[key]
    ok = value <= target if op == "<=" else value < target
    return "met" if ok else "missed"


def _fmt(v: Any, unit: str = "", nd: int = 1) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        v = round(v, nd) if nd else round(v)
    return f"{v:,}{unit}" if isinstance(v, int) else f"{v}{unit}"


def _short(commit: str | None) -> str:
    if not commit:
        return ""
    return commit[:8] + ("+dirty" if commit.endswith("+dirty") else "")


def headline(res: dict[str, Any]) -> dict[str, Any]:
    """The numbers of one size that go into the docs table (kept across runs)."""
    keys = [
        "files",
        "chunks",
        "first_lexical_s",
        "last_probe_lexical_s",
        "lexical_done_s",
        "dense_complete_s",
        "dense_phase_s",
        "dense_phase_chunks_per_s",
        "ideal_embed_s",
        "overhead_ratio",
        "cpu_overhead_ratio",
        "warm_restart_s",
        "peak_rss_mb",
        "peak_rss_cold_mb",
        "index_bytes",
        "dense_estimate_s",
        "machine_cores_busy",
        "other_cores_busy",
        "server_cpu_s",
        "initialize_s",
        "recall_90_s",
        "recall_probes",
        "server_workers",
        "server_and_workers_mb",
    ]
    h = {k: res.get(k) for k in keys if res.get(k) is not None}
    if "raw_embedder" in res:
        h["raw_chunks_per_s"] = res["raw_embedder"]["median"]
    for k in ("save_to_searchable_ms", "retrieve_indexing_ms", "retrieve_idle_ms", "retrieve_lexical_ms"):
        if k in res:
            h[k] = {"p50": res[k].get("p50"), "p95": res[k].get("p95"), "max": res[k].get("max"), "n": res[k].get("n")}
    if "status_ms" in res:
        h["status_max_ms"] = res["status_ms"].get("max")
    if "dense_window" in res:
        h["dense_window"] = res["dense_window"]
    if "warm_restart" in res:
        h["warm_restart_init_s"] = res["warm_restart"]["initialized_to_ready_s"]["p50"]
    if "snapshot_start" in res:
        snap = res["snapshot_start"]
        h["snapshot_start"] = {
            k: snap.get(k) for k in ("dense_99_s", "ready_s", "bytes_per_chunk", "changed_files", "error")
        }
    h["date"] = res.get("date")
    h["commit"] = res.get("commit")
    return h


def render_table(data: dict[str, dict[str, Any]]) -> str:
    sizes = [s for s in ("quick", "10k", "20k", "50k") if s in data]
    lines: list[str] = []
    if sizes:
        lines.append(
            "| metric | " + " | ".join(f"{s} chunks" if s != "quick" else "quick" for s in sizes) + " | target |"
        )
        lines.append("|---|" + "---|" * len(sizes) + "---|")

        def row(name: str, f, target: str = "") -> None:  # type: ignore[no-untyped-def]
            lines.append(f"| {name} | " + " | ".join(f(data[s]) for s in sizes) + f" | {target} |")

        def p(key: str, part: str) -> Any:
            return lambda d: _fmt((d.get(key) or {}).get(part), " ms", 0)

        def with_verdict(key: str, value: Any, text: str) -> str:
            v = verdict(key, value)
            return f"{text} ({v})" if v != "–" else text

        row("files / chunks", lambda d: f"{_fmt(d.get('files'))} / {_fmt(d.get('chunks'))}")
        row("first lexical hit (file indexed first)", lambda d: _fmt(d.get("first_lexical_s"), " s", 2))
        row("lexical hit in the file indexed last", lambda d: _fmt(d.get("last_probe_lexical_s"), " s", 2))
        row("cold: initialized → dense-complete (`ready`)", lambda d: _fmt(d.get("dense_complete_s"), " s", 0))
        row("dense phase (all lexical → `ready`)", lambda d: _fmt(d.get("dense_phase_chunks_per_s"), " chunks/s", 1))
        row("raw embedder, same run (median of 3)", lambda d: _fmt(d.get("raw_chunks_per_s"), " chunks/s", 1))
        row("chunks ÷ raw throughput", lambda d: _fmt(d.get("ideal_embed_s"), " s", 0))
        row(
            "**overhead ratio** (cold ÷ ideal)",
            lambda d: with_verdict("overhead_ratio", d.get("overhead_ratio"), _fmt(d.get("overhead_ratio"), "", 2)),
            "≤ 1.15",
        )
        row("server CPU ÷ raw CPU for the same chunks", lambda d: _fmt(d.get("cpu_overhead_ratio"), "", 2))
        row(
            "**warm restart** (spawn → `ready`, median)",
            lambda d: with_verdict("warm_restart_s", d.get("warm_restart_s"), _fmt(d.get("warm_restart_s"), " s", 2)),
            "< 2 s",
        )
        row("warm restart, `initialized` → `ready`", lambda d: _fmt(d.get("warm_restart_init_s"), " s", 2))
        row(
            "**fresh clone + previous commit's snapshot**: `initialized` → 99 % dense / `ready`",
            lambda d: (
                f"{_fmt((d.get('snapshot_start') or {}).get('dense_99_s'), ' s', 1)}"
                f" / {_fmt((d.get('snapshot_start') or {}).get('ready_s'), ' s', 1)}"
            ),
            "≤ 60 s",
        )
        row("snapshot size", lambda d: _fmt((d.get("snapshot_start") or {}).get("bytes_per_chunk"), " B/chunk", 0))
        row("save → searchable p50", p("save_to_searchable_ms", "p50"))
        row(
            "**save → searchable p95**",
            lambda d: with_verdict(
                "save_to_searchable_p95_ms",
                (d.get("save_to_searchable_ms") or {}).get("p95"),
                _fmt((d.get("save_to_searchable_ms") or {}).get("p95"), " ms", 0),
            ),
            "< 1000 ms",
        )
        row("rag/retrieve while indexing p50", p("retrieve_indexing_ms", "p50"))
        row(
            "**rag/retrieve while indexing p95**",
            lambda d: with_verdict(
                "retrieve_indexing_p95_ms",
                (d.get("retrieve_indexing_ms") or {}).get("p95"),
                _fmt((d.get("retrieve_indexing_ms") or {}).get("p95"), " ms", 0),
            ),
            "< 50 ms",
        )
        row(
            "rag/retrieve idle p50 / p95",
            lambda d: (
                f"{_fmt((d.get('retrieve_idle_ms') or {}).get('p50'), ' ms', 0)}"
                f" / {_fmt((d.get('retrieve_idle_ms') or {}).get('p95'), ' ms', 0)}"
            ),
        )
        row(
            "**peak RSS** (VmHWM)",
            lambda d: with_verdict("peak_rss_mb", d.get("peak_rss_mb"), _fmt(d.get("peak_rss_mb"), " MB", 0)),
            "< 1 GB at 50k",
        )
        row("index on disk", lambda d: _fmt(round((d.get("index_bytes") or 0) / 2**20, 1), " MB"))
        row(
            "other load on the machine during the cold run (busy cores of 2)",
            lambda d: _fmt(d.get("other_cores_busy"), "", 2),
        )
        row("measured", lambda d: f"{(d.get('date') or '')[:10]} `{_short(d.get('commit'))}`")
    big = [s for s in ("files10k", "chunks150k") if s in data]
    if big:
        lines.append("")
        lines.append("| large repositories (issue 19) | " + " | ".join(big) + " | goal |")
        lines.append("|---|" + "---|" * len(big) + "---|")

        def big_row(name: str, f, goal: str = "") -> None:  # type: ignore[no-untyped-def]
            lines.append(f"| {name} | " + " | ".join(f(data[s]) for s in big) + f" | {goal} |")

        def lat(d: dict[str, Any]) -> str:
            r = d.get("retrieve_lexical_ms") or {}
            return f"{_fmt(r.get('p50'), '', 0)} / {_fmt(r.get('p95'), '', 0)} / {_fmt(r.get('max'), ' ms', 0)}"

        def rss(d: dict[str, Any]) -> str:
            workers = f" (+ {_fmt(d.get('server_workers'), ' MB', 0)} workers" if d.get("server_workers") else ""
            if workers and d.get("server_and_workers_mb"):
                workers += f"; together at most {_fmt(d.get('server_and_workers_mb'), ' MB', 0)}"
            return _fmt(d.get("peak_rss_cold_mb"), " MB", 0) + workers + (")" if workers else "")

        def window(d: dict[str, Any]) -> str:
            win = d.get("dense_window") or {}
            if not win:
                return "–"
            raw = win.get("raw_chunks_per_s") or d.get("raw_chunks_per_s")
            return (
                f"{_fmt(win.get('chunks_per_s'), '', 1)} ÷ {_fmt(raw, '', 1)} = {_fmt(win.get('vs_raw'), '', 2)}"
                f" ({_fmt(win.get('seconds'), ' s', 0)})"
            )

        def estimate(d: dict[str, Any]) -> str:
            est = d.get("dense_estimate_s")
            return "≈ " + _fmt(round(est / 60), " min") if est else "–"

        big_row("files / chunks", lambda d: f"{_fmt(d.get('files'))} / {_fmt(d.get('chunks'))}")
        big_row("`initialize` answered, from spawn", lambda d: _fmt(d.get("initialize_s"), " s", 2), "≤ 0.5 s")
        big_row("first lexical hit (file indexed first)", lambda d: _fmt(d.get("first_lexical_s"), " s", 2))
        big_row(
            "**known symbol found** (in the file indexed last)",
            lambda d: _fmt(d.get("last_probe_lexical_s"), " s", 2),
            "≤ 15 s",
        )
        big_row(
            "**lexical recall ≥ 0.9** of the identifier probes",
            lambda d: _fmt(d.get("recall_90_s"), " s", 2),
            "≤ 15 s",
        )
        big_row("all files lexical (status)", lambda d: _fmt(d.get("lexical_done_s"), " s", 2))
        big_row("**peak RSS** of the server (VmHWM)", rss, "< 1,000 MB at 150k chunks")
        big_row("`rag/retrieve` while indexing p50 / p95 / max", lat, "p95 ≤ 20, max ≤ 200 ms")
        big_row("`rag/indexStatus` max", lambda d: _fmt(d.get("status_max_ms"), " ms", 0), "≤ 50 ms")
        big_row("dense pass after all-lexical: rate ÷ raw embedder", window, "≥ 0.95")
        big_row(
            "warm restart (spawn → every file searchable, nothing re-chunked)",
            lambda d: _fmt(d.get("warm_restart_s"), " s", 2),
            "< 2 s",
        )
        big_row("dense-complete (not run; chunks ÷ raw throughput)", estimate)
        big_row("cold dense-complete (`--dense-all`)", lambda d: _fmt(d.get("dense_complete_s"), " s", 0))
        big_row(
            "**fresh clone + previous commit's snapshot**: → 99 % dense / `ready` (`--dense-all`)",
            lambda d: (
                f"{_fmt((d.get('snapshot_start') or {}).get('dense_99_s'), ' s', 1)}"
                f" / {_fmt((d.get('snapshot_start') or {}).get('ready_s'), ' s', 1)}"
            ),
            "≤ 60 s",
        )
        big_row("other load on the machine (busy cores of 2)", lambda d: _fmt(d.get("other_cores_busy"), "", 2))
        big_row("measured", lambda d: f"{(d.get('date') or '')[:10]} `{_short(d.get('commit'))}`")
    return "\n".join(lines)


BEGIN = "<!-- bench-results:begin (written by `make bench`; edit outside these markers) -->"
END = "<!-- bench-results:end -->"
DATA = "<!-- bench-data "


def update_docs(path: Path, results: dict[str, dict[str, Any]]) -> None:
    text = path.read_text("utf-8") if path.is_file() else f"# Performance\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text or END not in text:
        text = text.rstrip() + f"\n\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    block, tail = rest.split(END, 1)
    data: dict[str, Any] = {}
    if DATA in block:  # keep the sizes this run did not measure
        raw = block.split(DATA, 1)[1].split(" -->", 1)[0]
        with contextlib.suppress(json.JSONDecodeError):
            data = json.loads(raw)
    data.update({name: headline(r) for name, r in results.items()})
    body = render_table(data)
    new_block = f"\n{body}\n\n{DATA}{json.dumps(data, sort_keys=True)} -->\n"
    path.write_text(head + BEGIN + new_block + END + tail, "utf-8")


def git_commit() -> str | None:
    """HEAD, with "+dirty" when the server's sources differ from it (read-only git calls)."""
    try:
        r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10)
        head = r.stdout.strip() or None
        d = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "server"], cwd=REPO, timeout=10)
        return f"{head}+dirty" if head and d.returncode == 1 else head
    except OSError:
        return None


# --------------------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description="ragls performance benchmark (see bench/README.md)")
    ap.add_argument("--out", type=Path, default=REPO / "bench-results", help="folder for bench.json and logs")
    ap.add_argument(
        "--sizes", default="10k,files10k,chunks150k,50k", help="comma-separated sizes from bench/corpus.toml"
    )
    ap.add_argument("--quick", action="store_true", help="smoke run: the 'quick' size, fewer samples, no docs")
    ap.add_argument("--cache", type=Path, default=default_cache(), help="downloads, workspaces and run caches")
    ap.add_argument("--saves", type=int, default=25, help="save-to-searchable samples")
    ap.add_argument("--idle-queries", type=int, default=100)
    ap.add_argument("--restarts", type=int, default=3)
    ap.add_argument("--dense-query-interval", type=float, default=1.0, help="seconds between queries while indexing")
    ap.add_argument(
        "--dense-window", type=float, default=120.0, help="lexical-only sizes: seconds of dense pass measured"
    )
    ap.add_argument("--nice", type=int, default=5, help="niceness of the raw embedder run (the server's default)")
    ap.add_argument("--timeout", type=float, default=3 * 3600, help="give up on a cold index after this long")
    ap.add_argument(
        "--keep", action="store_true", help="keep the workspaces and indexes (CACHE/workspaces, CACHE/runs)"
    )
    ap.add_argument(
        "--dense-all",
        action="store_true",
        help="index the lexical-only sizes to dense-complete too, then time a fresh clone with a snapshot"
        " (files10k: about 20 minutes more on 2 cores)",
    )
    ap.add_argument("--no-docs", action="store_true", help="do not write the table into docs/performance.md")
    ap.add_argument("--docs", type=Path, default=DOCS)
    a = ap.parse_args(argv)
    if a.quick:
        a.sizes = "quick"
        a.saves = min(a.saves, 10)
        a.idle_queries = min(a.idle_queries, 30)
        a.restarts = min(a.restarts, 2)
        a.no_docs = True
    a.cache = a.cache.expanduser().resolve()
    a.out = a.out.expanduser().resolve()
    return a


async def amain(a: argparse.Namespace) -> int:
    corpus = load_corpus()
    sizes = [s.strip() for s in a.sizes.split(",") if s.strip()]
    unknown = [s for s in sizes if s not in corpus.size]
    if unknown:
        print(f"unknown sizes {unknown}; known: {sorted(corpus.size)}", file=sys.stderr)
        return 2
    a.out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "loadavg_at_start": os.getloadavg(),
        },
        "server": server_command(),
        "targets": {k: f"{op} {v}" for k, (op, v) in TARGETS.items()},
        "sizes": {},
    }
    from ragls import __version__

    report["ragls_version"] = __version__
    raw_cache: dict[str, Any] = {}
    results: dict[str, dict[str, Any]] = {}
    for name in sizes:
        log(f"size {name}: building the workspace")
        ws = build_workspace(corpus, name, a.cache, log=lambda m: log(m))
        if a.dense_all:
            ws.lexical_only = False
        t = time.monotonic()
        res = await run_size(ws, a.out, a, raw_cache)
        res["date"] = datetime.now(UTC).isoformat(timespec="seconds")
        res["commit"] = report["commit"]
        res["bench_seconds"] = round(time.monotonic() - t, 1)
        results[name] = res
        report["sizes"][name] = res
        report["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
        (a.out / "bench.json").write_text(json.dumps(report, indent=2) + "\n", "utf-8")
        log(f"size {name} done in {res['bench_seconds']:.0f}s: " + json.dumps(headline(res)))
        if not a.keep:
            shutil.rmtree(ws.root, ignore_errors=True)
    table = render_table({k: headline(v) for k, v in results.items()})
    (a.out / "bench.md").write_text(table + "\n", "utf-8")
    print(table)
    if not a.no_docs:
        update_docs(a.docs, results)
        log(f"table written into {a.docs}")
    log(f"results in {a.out / 'bench.json'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    return asyncio.run(amain(a))


if __name__ == "__main__":
    sys.exit(main())
