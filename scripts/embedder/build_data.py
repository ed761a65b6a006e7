#!/usr/bin/env python3
"""Build the training pairs of ragls's code-tuned embedder.

    .venv/bin/python scripts/embedder/build_data.py \
        --blocklist /work/shared/training-blocklist.txt \
        --eval-sources eval/sources.toml --eval-sources ../eval/eval/sources.toml

Downloads every package of scripts/embedder/sources.toml (cached in --cache), refuses any
that is not permissively licensed, evaluated, or blocklisted, mines (doc summary, code chunk)
pairs with ragls's chunker (extract.py), caps each package at `max_pairs_per_package` with
the fixed seed, and writes --cache/pairs.jsonl plus the data manifest (package, version,
sha256, licence, pairs; refused packages with the reason; the eval lists it was checked
against) to scripts/embedder/data-manifest.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import tomllib
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from extract import ROOT, file_pairs  # noqa: E402
from fetch import (  # noqa: E402
    Package,
    Refused,
    check_excluded,
    commit_task_names,
    eval_names,
    fetch,
    issue_task_names,
    load_blocklist,
    record,
)

from ragls.text.languages import language_of  # noqa: E402

_SKIP_DIRS = {
    "node_modules",
    "vendor",
    "third_party",
    "thirdparty",
    "external",
    "deps",
    "dist-cjs",
    "min",
    "benchmarks",
}


_DECLARATIONS = (".d.ts", ".d.mts", ".d.cts")


def default_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ragls-train"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sources", type=Path, default=HERE / "sources.toml")
    p.add_argument("--cache", type=Path, default=default_cache())
    p.add_argument("--blocklist", type=Path, required=True)
    p.add_argument("--eval-sources", type=Path, action="append", default=[], required=True)
    p.add_argument(
        "--commits",
        type=Path,
        default=ROOT / "eval" / "commits.toml",
        help="the commit task's repositories: its held-out ones count as evaluated projects",
    )
    p.add_argument(
        "--issues",
        type=Path,
        default=ROOT / "eval" / "issues.toml",
        help="the issue task's repositories (every split) count as evaluated projects",
    )
    p.add_argument("--manifest", type=Path, default=HERE / "data-manifest.json")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument(
        "--check-only",
        action="store_true",
        help="build nothing: re-check the manifest's packages against the (current) eval lists and blocklist",
    )
    return p.parse_args(argv)


def check_manifest(manifest: Path, blocklist: set[str], evaluated: set[str]) -> int:
    """Exit status 1 when a package that was trained on is now evaluated or blocklisted."""
    data = json.loads(manifest.read_text(encoding="utf-8"))
    bad = 0
    for entry in data["packages"]:
        pkg = Package(entry["registry"], entry["package"], entry["version"], names=entry["names"])
        try:
            check_excluded(pkg, blocklist, evaluated)
        except Refused as exc:
            print(f"OVERLAP {exc}")
            bad += 1
    print(f"{len(data['packages'])} trained packages checked against {len(evaluated)} evaluated names: {bad} overlaps")
    return 1 if bad else 0


def _stem(path: Path) -> str:
    return path.name.split(".", 1)[0]


def package_pairs(root: str, exclude: tuple[str, ...] = ()) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    base = Path(root)
    paths = sorted(base.rglob("*"))
    # A package that ships its TypeScript sources also ships them compiled, doc comments kept:
    # the .js twin of a .ts/.tsx file would be the same pair again in another language.
    ts_stems = {_stem(p) for p in paths if p.suffix in (".ts", ".tsx") and not p.name.endswith(_DECLARATIONS)}
    for path in paths:
        rel = path.relative_to(base).as_posix()
        if not path.is_file() or _SKIP_DIRS & set(rel.split("/")[:-1]) or any(x in rel for x in exclude):
            continue
        if rel.endswith((".min.js", *_DECLARATIONS)):
            continue
        if path.suffix in (".js", ".mjs", ".cjs") and _stem(path) in ts_stems:
            continue
        language = language_of(rel)
        if language is None:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        out.extend(asdict(p) for p in file_pairs(rel, language, text))
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    config = tomllib.loads(args.sources.read_text(encoding="utf-8"))
    seed, cap = int(config["seed"]), int(config["max_pairs_per_package"])
    blocklist = load_blocklist(args.blocklist)
    evaluated = (
        eval_names(args.eval_sources, config.get("related", {}))
        | commit_task_names(args.commits)
        | issue_task_names(args.issues)
    )
    if args.check_only:
        return check_manifest(args.manifest, blocklist, evaluated)
    packages = [Package(**p) for p in config["package"]]
    twice = [name for name, n in Counter(p.package for p in packages).items() if n > 1]
    if twice:  # a package listed twice would be mined twice: duplicate pairs, skewed counts
        print(f"listed more than once in {args.sources.name}: {', '.join(sorted(twice))}", file=sys.stderr)
        return 2

    refused: list[dict[str, str]] = []
    fetched: list[Package] = []

    def one(pkg: Package) -> None:
        try:
            fetched.append(fetch(pkg, args.cache, blocklist, evaluated))
            print(f"fetched {pkg.label} ({pkg.licence})", flush=True)
        except Refused as exc:
            refused.append({"package": pkg.package, "registry": pkg.registry, "reason": str(exc)})
            print(f"REFUSED {exc}", flush=True)
        except Exception as exc:  # a registry hiccup loses one package, not the build
            refused.append({"package": pkg.package, "registry": pkg.registry, "reason": f"error: {exc}"[:300]})
            print(f"FAILED {pkg.package}: {exc}", flush=True)

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(one, packages))
    order = {p.package: i for i, p in enumerate(packages)}
    fetched.sort(key=lambda p: order[p.package])

    rng = random.Random(seed)
    all_pairs: list[dict[str, str]] = []
    entries: list[dict[str, object]] = []
    with ProcessPoolExecutor(args.jobs) as pool:
        mined = list(pool.map(package_pairs, [p.root for p in fetched], [tuple(p.exclude) for p in fetched]))
    for pkg, pairs in zip(fetched, mined, strict=True):
        seen: set[tuple[str, str]] = set()
        unique = []
        for pair in pairs:
            key = (pair["query"].lower(), pair["code"])
            if key not in seen:
                seen.add(key)
                unique.append(pair)
        rng.shuffle(unique)
        kept = unique[:cap]
        for pair in kept:
            pair["package"] = pkg.package
        all_pairs.extend(kept)
        langs = Counter(p["language"] for p in kept)
        entries.append({**record(pkg), "pairs": len(kept), "mined": len(unique), "languages": dict(langs)})
        print(f"{pkg.label:<50} {len(unique):>6} mined {len(kept):>5} kept {dict(langs)}", flush=True)

    out = args.cache / "pairs.jsonl"
    with out.open("w", encoding="utf-8") as handle:
        for pair in all_pairs:
            handle.write(json.dumps(pair, ensure_ascii=False, sort_keys=True) + "\n")
    data_sha = hashlib.sha256(out.read_bytes()).hexdigest()
    langs = Counter(p["language"] for p in all_pairs)
    manifest = {
        "seed": seed,
        "max_pairs_per_package": cap,
        "pairs": len(all_pairs),
        "pairs_sha256": data_sha,
        "languages": dict(sorted(langs.items())),
        "packages_used": len(entries),
        "excluded_by": {
            "blocklist": f"{args.blocklist.name}: {len(blocklist)} hashed names",
            "eval_sources": [
                {"path": str(p), "sha256": hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None}
                for p in [*args.eval_sources, args.commits, args.issues]
            ],
        },
        "packages": entries,
        "refused": sorted(refused, key=lambda r: r["package"]),
    }
    args.manifest.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"{len(all_pairs)} pairs from {len(entries)} packages; {dict(langs)}; -> {out} ({data_sha[:12]})")
    print(f"manifest: {args.manifest.relative_to(ROOT) if args.manifest.is_relative_to(ROOT) else args.manifest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
