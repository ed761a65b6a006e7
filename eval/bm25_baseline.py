#!/usr/bin/env python3
"""BM25 over fixed line windows on every golden set: the lexical baseline ragls must beat.

    python eval/bm25_baseline.py [--out DIR] [--size 60] [--overlap 0] [--json FILE]

Reads DIR/manifest.json written by build_golden.py, indexes each project's stripped sources
as `size`-line windows, runs every query and prints the metrics per project and language.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "server"))

from build_golden import default_out  # noqa: E402
from ragls.evaluation.bm25 import BM25Index, Document, Tokenizer, simple_tokenize, windows  # noqa: E402
from ragls.evaluation.golden import GoldenSet, load_golden  # noqa: E402
from ragls.evaluation.metrics import QueryMetrics, aggregate, evaluate_query  # noqa: E402

COLUMNS = [
    "recall_at_1",
    "recall_at_5",
    "recall_at_10",
    "mrr_at_10",
    "ndcg_at_10",
    "precision_at_5",
    "chunk_precision_at_5",
]


def load_tokenizer(spec: str) -> Tokenizer:
    """`simple` (lower-cased \\w+ runs) or `module:function`, e.g. ragls.text.lexical:tokenize."""
    if spec == "simple":
        return simple_tokenize
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def window_documents(golden: GoldenSet, size: int, overlap: int) -> list[Document]:
    root = golden.root_dir()
    docs: list[Document] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        docs.extend(windows(path.relative_to(root).as_posix(), text, size, overlap))
    return docs


def run_project(
    golden: GoldenSet, size: int, overlap: int, tokenizer: Tokenizer = simple_tokenize
) -> tuple[list[QueryMetrics], dict]:
    began = time.perf_counter()
    index = BM25Index(window_documents(golden, size, overlap), tokenizer=tokenizer)
    built = time.perf_counter()
    results: list[QueryMetrics] = []
    latencies: list[float] = []
    for query in golden.queries:
        start = time.perf_counter()
        hits = index.search(query.query, k=10)
        latencies.append((time.perf_counter() - start) * 1000)
        results.append(evaluate_query(hits, query))
    summary = aggregate(results, latencies)
    summary.update(documents=len(index), index_seconds=round(built - began, 2))
    return results, summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=default_out(), help="golden sets folder")
    parser.add_argument("--size", type=int, default=60, help="window size in lines")
    parser.add_argument("--overlap", type=int, default=0, help="lines shared by windows")
    parser.add_argument("--tokenizer", default="simple", help="simple, or module:function")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)
    tokenizer = load_tokenizer(args.tokenizer)

    manifest = json.loads((args.out / "manifest.json").read_text(encoding="utf-8"))
    by_language: dict[str, list[QueryMetrics]] = defaultdict(list)
    everything: list[QueryMetrics] = []
    report: dict[str, dict] = {"projects": {}, "languages": {}}
    print(f"{'project':<22} {'docs':>6} " + " ".join(f"{c[:12]:>12}" for c in COLUMNS))
    for entry in manifest["projects"]:
        golden = load_golden(args.out / entry["golden"])
        results, summary = run_project(golden, args.size, args.overlap, tokenizer)
        by_language[entry["language"]].extend(results)
        everything.extend(results)
        report["projects"][golden.name] = summary
        print(f"{golden.name:<22} {int(summary['documents']):>6} " + " ".join(f"{summary[c]:>12.3f}" for c in COLUMNS))
    for language, results in sorted(by_language.items()):
        report["languages"][language] = aggregate(results)
    report["all"] = aggregate(everything)
    print()
    for name, summary in [*report["languages"].items(), ("all", report["all"])]:
        print(f"{name:<22} {int(summary['queries']):>6} " + " ".join(f"{summary[c]:>12.3f}" for c in COLUMNS))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
