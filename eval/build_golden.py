#!/usr/bin/env python3
"""Build the `ragls eval` golden sets from the pinned sources in eval/sources.toml.

    python eval/build_golden.py [--out DIR] [--only NAME ...] [--jobs N]

For every project: download the pinned package once (cached in DIR/downloads, sha256
verified on every run), unpack it, remove the doc comments of every function from a copy of
its sources (DIR/<name>/src), and write DIR/<name>/golden.json with one query per sampled
function: the function's doc summary, answered by its file, symbol and new line range.
DIR/manifest.json lists the projects and their statistics. Nothing is written to the repo.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "server"))

from goldenbuild.build import ProjectStats, build_project  # noqa: E402
from goldenbuild.sources import Source, SourcesFile, load_sources  # noqa: E402

MANIFEST_VERSION = 1


def default_out() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "ragls-eval"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=default_out(), help="output folder")
    parser.add_argument("--sources", type=Path, default=HERE / "sources.toml")
    parser.add_argument(
        "--only", action="append", default=[], metavar="NAME", help="build only these projects (repeatable)"
    )
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    return parser.parse_args(argv)


def _build_one(source: Source, out: Path, config: SourcesFile) -> ProjectStats:
    return build_project(source, out / "downloads", out, config.max_queries, config.seed)


def write_manifest(out: Path, config: SourcesFile, stats: list[ProjectStats]) -> None:
    manifest_path = out / "manifest.json"
    previous: dict[str, dict[str, object]] = {}
    if manifest_path.is_file():
        old = json.loads(manifest_path.read_text(encoding="utf-8"))
        if old.get("version") == MANIFEST_VERSION:
            previous = {p["name"]: p for p in old.get("projects", [])}
    # Keep entries of projects that were not rebuilt this time (--only) but still exist.
    merged = {name: entry for name, entry in previous.items() if (out / name).is_dir()}
    merged.update({s.name: s.as_dict() for s in stats})
    order = [p.name for p in config.project]
    projects = [merged[name] for name in order if name in merged]
    manifest = {"version": MANIFEST_VERSION, "seed": config.seed, "projects": projects}
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def print_table(stats: list[ProjectStats]) -> None:
    head = f"{'project':<24} {'lang':<11} {'files':>6} {'lines':>8} {'funcs':>6} "
    print(head + f"{'doc':>6} {'cand':>6} {'queries':>7} {'secs':>6}")
    for s in stats:
        print(
            f"{s.label:<24} {s.language:<11} {s.files:>6} {s.lines:>8} {s.functions:>6} "
            f"{s.documented:>6} {s.candidates:>6} {s.queries:>7} {s.seconds:>6.1f}"
        )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    config = load_sources(args.sources)
    chosen = [p for p in config.project if not args.only or p.name in args.only]
    unknown = set(args.only) - {p.name for p in config.project}
    if unknown:
        print(f"unknown project(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    out: Path = args.out.expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    if args.jobs > 1 and len(chosen) > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            stats = list(pool.map(_build_one, chosen, [out] * len(chosen), [config] * len(chosen)))
    else:
        stats = [_build_one(source, out, config) for source in chosen]
    write_manifest(out, config, stats)
    print_table(stats)
    print(f"built {len(stats)} project(s) into {out} in {time.perf_counter() - began:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
