"""Warm `rag/retrieve` latency on a large dense index, per kind of request (issue 38's goal: p95
≤ 150 ms for topK 20 at 100k chunks on these 2 cores, whatever stages a request runs).

    python -m bench.latency [--workspace files10k] [--rounds 4] [--out DIR]

Starts the real server (stdio) on the workspace's index in the benchmark cache, which must be
dense-complete (`python -m bench.run --sizes files10k --dense-all` builds it; this tool stops
with that hint if the server still has chunks to embed after `--ready-timeout` seconds). It
then sends, topK 20, every request of four kinds once to warm the caches (the first change
request also builds the source lexicon: the tool then waits until the server's CPU rests), and
`--rounds` passes over all of them, the kinds interleaved:

- question: the benchmark's natural-language questions (intent "question");
- identifier: names of definitions sampled from the workspace;
- change: one-line change descriptions (the titles of the issue evaluation's bug reports,
  eval/issues/*.jsonl), intent "change";
- report: those bug reports whole (title and body, up to the evaluation's length cap), intent
  "change": the long requests that embed the model's full 256 tokens and rank the source BM25.

The reports are other projects' issues: what is measured is the cost of a request of that
length and shape on this index, not their answers. Round trips are timed by the client
(`ms`), next to the server's own `tookMs`; `DIR/latency.json` keeps every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.corpus import NATURAL_QUERIES, build_workspace, default_cache, load_corpus
from bench.lsp import cpu_seconds
from bench.run import REPO, Server, summary
from ragls.evaluation.issues import IssueQuestion

TOP_K = 20


def issue_requests(limit: int = 40) -> list[IssueQuestion]:
    """Bug reports of the issue evaluation, a few from every repository, in a fixed order."""
    out: list[IssueQuestion] = []
    files = sorted((REPO / "eval" / "issues").glob("*.jsonl"))
    per = max(1, limit // max(1, len(files)))
    for path in files:
        lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
        out += [IssueQuestion.model_validate(json.loads(ln)) for ln in lines[:per]]
    return out[:limit]


async def idle(pid: int, timeout: float = 180.0) -> None:
    """Until the process used under 5 % of a core over 2 s."""
    deadline = time.monotonic() + timeout
    before = cpu_seconds(pid) or 0.0
    while time.monotonic() < deadline:
        await asyncio.sleep(2)
        now = cpu_seconds(pid) or 0.0
        if now - before < 0.1:
            return
        before = now


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    cache = args.cache
    ws = build_workspace(load_corpus(), args.workspace, cache, log=lambda m: print(m, file=sys.stderr))
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    srv = Server(ws, cache / "runs" / ws.name, out, "retrieve latency")
    client = await srv.start()
    try:
        try:
            _, st = await srv.wait_ready(0.5, args.ready_timeout)
        except TimeoutError:
            raise SystemExit(
                f"the index of {ws.name} is not dense-complete (still embedding after {args.ready_timeout:.0f} s): "
                f"build it first with `python -m bench.run --sizes {ws.name} --dense-all`"
            ) from None
        issues = issue_requests()
        idents = [q for q in ws.queries if q not in NATURAL_QUERIES]
        kinds: dict[str, tuple[list[str], dict[str, Any]]] = {
            "question": (list(NATURAL_QUERIES), {}),
            "identifier": (idents, {}),
            "change": ([q.title for q in issues], {"intent": "change"}),
            "report": ([q.text() for q in issues], {"intent": "change"}),
        }
        # Warm-up. The first change request starts the source lexicon's build in the
        # background (18 s for files10k): wait until the server's CPU rests before measuring.
        for qs, kw in kinds.values():
            for q in qs:
                await client.retrieve(q, topK=TOP_K, **kw)
        await idle(client.pid)
        times: dict[str, list[float]] = {k: [] for k in kinds}
        took: dict[str, list[float]] = {k: [] for k in kinds}
        longest = max(len(qs) for qs, _ in kinds.values())
        for _ in range(args.rounds):
            for i in range(longest):
                for kind, (qs, kw) in kinds.items():
                    if i < len(qs):
                        ms, res = await client.retrieve(qs[i], topK=TOP_K, **kw)
                        times[kind].append(ms)
                        took[kind].append(float(res.get("tookMs", 0.0)))
        return {
            "workspace": ws.name,
            "files": st.get("filesTotal"),
            "chunks": st.get("chunks"),
            "top_k": TOP_K,
            "rounds": args.rounds,
            "kinds": {
                k: {"requests": len(kinds[k][0]), "ms": summary(times[k]), "took_ms": summary(took[k])} for k in kinds
            },
        }
    finally:
        await client.close()


def table(res: dict[str, Any]) -> str:
    rows = [
        f"`rag/retrieve` warm, topK {res['top_k']}, {res['workspace']} ({res['chunks']:,} chunks)",
        "",
        "| request | round trip p50 / p95 / max | server `tookMs` p50 / p95 |",
        "|---|---|---|",
    ]
    for kind, d in res["kinds"].items():
        ms, took = d["ms"], d["took_ms"]
        rows.append(
            f"| {kind} ({d['requests']}) | {ms['p50']} / {ms['p95']} / {ms['max']} ms | {took['p50']} / {took['p95']} ms |"
        )
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workspace", default="files10k")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--ready-timeout", type=float, default=300.0)
    ap.add_argument("--cache", type=Path, default=default_cache())
    ap.add_argument("--out", type=Path, default=Path("bench-latency"))
    args = ap.parse_args()
    res = asyncio.run(measure(args))
    (args.out / "latency.json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    print(table(res))


if __name__ == "__main__":
    main()
