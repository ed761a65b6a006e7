"""(change description, changed code) pairs from consecutive releases of registry packages.

The commit task asks "which files does this change touch?" with a commit message; the
doc-summary pairs the embedder was trained on never show it a description of a *change*.
Registries hold that pairing without any git history: a package's changelog grows by the
entry of each release, and the release's sources differ from the previous one's where the
entry's change was made. For each pair of consecutive releases (x.y.z versions) of a
package:

- the query is what the release added to its top-level CHANGELOG/CHANGES/HISTORY/NEWS file,
  cleaned of version headers, section titles, issue/PR references, commit hashes and
  credits, and kept only when it is 1-4 entries (a long release note describes many changes);
- the code is every chunk of the *previous* release (what a workspace at the parent holds,
  as the commit task indexes the parent commit) that the new release changed, in 1-3
  modified source files (tests, docs, examples and built bundles not counted), at most 3
  chunks per file; a release that touches more than 6 chunks of a file is a sweep, skipped.

Packages are refused as build_data.py refuses them (licence, training blocklist, every
evaluated project of both tasks, both splits of the commit task). Usage:

    .venv/bin/python scripts/embedder/release_pairs.py --candidates CANDIDATES.txt \
        --blocklist /work/shared/training-blocklist.txt --out DIR

CANDIDATES.txt holds `pypi:NAME` / `npm:NAME` lines. DIR gets pairs.jsonl, manifest.jsonl
(every release archive used, with its sha256) and refused.json. Then the training set of one
stage, these pairs (queries cleaned again by the current clean_entry, duplicates dropped) and as
many doc pairs of an earlier stage replayed so the doc -> code skill is kept:

    .venv/bin/python scripts/embedder/release_pairs.py --mix DIR/pairs.jsonl [DIR2/pairs.jsonl ...] \
        --replay STAGE8-PAIRS.jsonl --out STAGE.jsonl
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import io
import json
import random
import re
import sys
import tarfile
import tomllib
import urllib.parse
import urllib.request
import zipfile
from collections import Counter
from multiprocessing import Pool
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(1, str(ROOT / "eval"))
sys.path.insert(2, str(Path(__file__).resolve().parent))

import fetch  # noqa: E402

from goldenbuild.extract import is_test_path  # noqa: E402
from ragls.chunking import chunk_file  # noqa: E402
from ragls.chunking.code import SPECS  # noqa: E402
from ragls.text.languages import language_of  # noqa: E402

_CHANGELOG = re.compile(r"^(changelog|changes|history|news|release[-_ ]?notes)(\.(md|rst|txt|markdown))?$", re.I)
# Built or vendored code, and files that are not the package's own sources.
_NOT_SOURCE = re.compile(
    r"(^|/)(dist|build|umd|esm|cjs|bundles?|min|vendor|vendored|_vendor|node_modules|third_party|types|typings"
    r"|docs?|examples?|benchmarks?|bench|scripts|tests?|__tests__|spec|fixtures)/|\.min\.|\.d\.[mc]?ts$",
    re.I,
)
_VERSIONS_PER_PACKAGE = 25
_MAX_ARCHIVE = 5_000_000  # bytes: a package this large is mostly not its own small sources
_MAX_PAIRS_PER_PACKAGE = 60
_MAX_FILE = 400_000

# Lines of a changelog that are structure, not description.
_HEADER = re.compile(
    r"^\s*(#+\s*|\*\*|=+\s*)?\[?v?\d+\.\d+(\.\d+)?|^\s*(version|release|released)\b|^\s*[=\-~^#*]{3,}\s*$"
    r"|^\s*\[[^\]]+\]:\s*\S+|^\s*<a name=|^\s*\.\. ",
    re.I,
)
_SECTION = re.compile(
    r"^(#+\s*)?(bug ?fix(es)?|fixes|features?|fixed|added|changed|removed|deprecated|security|patch changes"
    r"|minor changes|major changes|other( changes)?|misc(ellaneous)?|chores?|dependencies|performance"
    r"|improvements?|breaking changes?|internal|documentation|enhancements?|unreleased)\s*:?$",
    re.I,
)


def clean_entry(text: str) -> str | None:
    """The description a release added to its changelog, or None when it is not one change."""
    lines: list[str] = []
    for raw in text.splitlines():
        if not raw.strip() or _HEADER.match(raw):
            continue
        s = re.sub(r"^\s*([-*+]|\d+\.)\s+", "", raw).strip()
        if _SECTION.match(s.strip("*_ ")):
            continue
        s = re.sub(r":(pr|issue|user|ghsa|cve|bug|commit):`?[^`\s]*`?", "", s)  # Sphinx roles
        s = re.sub(
            r"\(\[?#?\d+\]?\([^)]*\)\)|\[#?\d+\]\([^)]*\)|\((issue|pr|gh-)?#?\d+\)|#\d+|\bgh-\d+|\bissue\d+",
            "",
            s,
            flags=re.I,
        )
        s = re.sub(r"\[([0-9a-f]{7,40})\]\([^)]*\)|\b[0-9a-f]{7,40}\b", "", s)  # commit hashes
        s = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", s)  # a link: its text
        s = re.sub(r"`?<?https?://[^\s)>]+>?`?_{0,2}", "", s)  # a bare address (reST `<url>`_ too)
        s = re.sub(
            r"\b(thanks( to)?|(reported |contributed |fixed )?by)\s+@[\w-]+((\s*,|\s+and)\s+@[\w-]+)*!?",
            "",
            s,
            flags=re.I,
        )
        s = re.sub(r"@[\w-]+", "", s)
        s = re.sub(r"\bthanks?\b.*$", "", s, flags=re.I)
        s = re.sub(r"[`*]|\(\s*\)", "", s)
        s = re.sub(r"\s+", " ", s).strip(" -:;,.")
        if len(s) >= 8 and re.search(r"[a-zA-Z]{3}", s):
            lines.append(s)
    if not lines or len(lines) > 4:
        return None
    query = ". ".join(lines)
    if not 15 <= len(query) <= 500:
        return None
    if re.match(r"^(bump|update|upgrade)\b.*\b(dependenc|version|deps)", query, re.I):
        return None
    return query


def added_lines(old: str, new: str) -> str:
    a, b = old.splitlines(), new.splitlines()
    out: list[str] = []
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("insert", "replace"):
            out.extend(b[j1:j2])
    return "\n".join(out)


def changed_rows(old: str, new: str) -> set[int]:
    """1-based lines of `old` that `new` changed (an insertion marks its neighbours)."""
    a, b = old.splitlines(), new.splitlines()
    rows: set[int] = set()
    for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            rows.update(range(i1 + 1, i2 + 1))
        elif tag == "insert":
            rows.update({max(1, i1), i1 + 1})
    return rows


def _sources(files: dict[str, str]) -> dict[str, str]:
    return {
        p: t for p, t in files.items() if language_of(p) in SPECS and not _NOT_SOURCE.search(p) and not is_test_path(p)
    }


def release_pairs(prev: dict[str, str], cur: dict[str, str]) -> list[dict[str, str]]:
    logs = sorted(p for p in cur if "/" not in p and _CHANGELOG.match(p))
    if not logs:
        return []
    query = clean_entry(added_lines(prev.get(logs[0], ""), cur[logs[0]]))
    if query is None:
        return []
    old, new = _sources(prev), _sources(cur)
    modified = [p for p in old if p in new and old[p] != new[p]]
    if not 1 <= len(modified) <= 3 or len([p for p in new if p not in old]) > 2:
        return []
    out: list[dict[str, str]] = []
    for path in modified:
        rows = changed_rows(old[path], new[path])
        language = str(language_of(path))
        hit = [
            c
            for c in chunk_file(path, language, old[path])
            if c.kind != "declaration" and any(c.start_line <= r <= c.end_line for r in rows)
        ]
        if len(hit) > 6:  # a sweep through the file: the entry is about none of it in particular
            return []
        for c in hit[:3]:
            if len(c.text.strip()) >= 40:
                out.append(
                    {
                        "query": query,
                        "code": c.embedding_text(),
                        "path": path,
                        "symbol": c.symbol or "",
                        "language": language,
                        "kind": c.kind,
                    }
                )
    return out


def _get(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "ragls-train"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.read()


def _read_archive(data: bytes, zipped: bool) -> dict[str, str]:
    """Changelogs and chunkable sources of a release, by path under the archive's top folder."""
    members: list[tuple[str, Any]] = []
    if zipped:
        z = zipfile.ZipFile(io.BytesIO(data))
        members = [
            (i.filename, lambda i=i: z.read(i)) for i in z.infolist() if not i.is_dir() and i.file_size < _MAX_FILE
        ]
    else:
        t = tarfile.open(fileobj=io.BytesIO(data))
        members = [
            (m.name, lambda m=m: t.extractfile(m).read()) for m in t.getmembers() if m.isfile() and m.size < _MAX_FILE
        ]  # type: ignore[union-attr]
    out: dict[str, str] = {}
    for name, read in members:
        rel = name.split("/", 1)[1] if "/" in name else name
        if _CHANGELOG.match(rel) or language_of(rel) in SPECS:
            try:
                out[rel] = read().decode("utf-8")
            except UnicodeDecodeError:
                continue
    return out


def _semver(v: str) -> tuple[int, int, int] | None:
    m = re.match(r"^v?(\d+)\.(\d+)\.(\d+)$", v)
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def _releases(registry: str, name: str) -> tuple[str, list[tuple[str, str]]]:
    """The package's licence and its last x.y.z releases (version, archive URL), oldest first."""
    if registry == "npm":
        meta = json.loads(_get(f"https://registry.npmjs.org/{name.replace('/', '%2F')}"))
        versions = {
            v: d["dist"]["tarball"]
            for v, d in meta.get("versions", {}).items()
            if _semver(v) and d["dist"].get("unpackedSize", 0) < 4 * _MAX_ARCHIVE
        }
        latest = meta.get("dist-tags", {}).get("latest", "")
        lic = meta.get("versions", {}).get(latest, {}).get("license", meta.get("license", ""))
        licence = lic.get("type", "") if isinstance(lic, dict) else str(lic or "")
    else:
        url = f"https://pypi.org/pypi/{name}/json"
        meta = json.loads(_get(url))
        info = meta["info"]
        classifiers = [c.split("::")[-1].strip() for c in info.get("classifiers", []) if c.startswith("License ::")]
        licence = (
            "; ".join([info.get("license_expression") or "", *classifiers]).strip("; ")
            or str(info.get("license") or "")[:80]
        )
        versions = {}
        for v, files in meta.get("releases", {}).items():
            sdists = [
                f
                for f in files
                if f["packagetype"] == "sdist"
                and f["filename"].endswith((".tar.gz", ".zip"))
                and f["size"] < _MAX_ARCHIVE
            ]
            if _semver(v) and sdists:
                versions[v] = urllib.parse.urljoin(url, sdists[0]["url"])
    ordered = sorted(versions, key=lambda v: _semver(v) or (0, 0, 0))[-_VERSIONS_PER_PACKAGE:]
    return licence, [(v, versions[v]) for v in ordered]


def mine_package(spec: str) -> dict[str, Any]:
    registry, name = spec.split(":", 1)
    try:
        licence, releases = _releases(registry, name)
        fetch.check_licence(fetch.Package(registry, name, licence=licence))
    except fetch.Refused as exc:
        return {"spec": spec, "refused": str(exc)}
    except Exception as exc:
        return {"spec": spec, "refused": f"registry: {type(exc).__name__}: {exc}"[:200]}
    pairs: list[dict[str, str]] = []
    used: list[dict[str, str]] = []
    prev: tuple[str, dict[str, str]] | None = None
    for version, url in releases:
        try:
            data = _get(url)
            files = _read_archive(data, url.endswith(".zip"))
        except Exception:
            prev = None
            continue
        used.append({"version": version, "url": url, "sha256": hashlib.sha256(data).hexdigest()})
        if prev is not None:
            for pair in release_pairs(prev[1], files):
                pairs.append({**pair, "package": name, "registry": registry, "releases": f"{prev[0]}..{version}"})
        prev = (version, files)
    return {"spec": spec, "licence": licence, "releases": used, "pairs": pairs[:_MAX_PAIRS_PER_PACKAGE]}


def write_manifest(release: list[Path], pairs: list[dict[str, str]], out: Path) -> None:
    """The data manifest of a stage's release pairs: for every package that gave one, its
    licence and the sha256 of each release archive a pair came from (from manifest.jsonl
    beside each pairs.jsonl)."""
    archives: dict[str, dict[str, str]] = {}
    licences: dict[str, str] = {}
    for path in release:
        for line in (path.parent / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            archives[row["spec"]] = {r["version"]: r["sha256"] for r in row["releases"]}
            licences[row["spec"]] = row["licence"]
    used: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        spec = f"{pair['registry']}:{pair['package']}"
        entry = used.setdefault(spec, {"licence": licences[spec], "pairs": 0, "releases": {}})
        entry["pairs"] += 1
        for version in pair["releases"].split(".."):
            entry["releases"][version] = archives[spec][version]
    lines = [json.dumps({"spec": k, **v}, sort_keys=True) for k, v in sorted(used.items())]
    out.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")


def mix(release: list[Path], replay: Path, out: Path, seed: int) -> int:
    """Release pairs (re-cleaned, deduplicated) and as many replayed doc pairs, shuffled."""
    rows: dict[tuple[str, ...], dict[str, str]] = {}
    for path in release:
        for line in path.read_text(encoding="utf-8").splitlines():
            pair = json.loads(line)
            query = clean_entry(pair["query"])
            if query is not None:
                key = (pair["registry"], pair["package"], pair["releases"], pair["path"], pair["code"])
                rows.setdefault(key, {**pair, "query": query})
    write_manifest(release, list(rows.values()), out.with_suffix(".manifest.json"))
    rng = random.Random(seed)
    docs = replay.read_text(encoding="utf-8").splitlines()
    rng.shuffle(docs)
    lines = [json.dumps(p, sort_keys=True) for p in rows.values()] + docs[: len(rows)]
    rng.shuffle(lines)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    languages = Counter(json.loads(ln)["language"] for ln in lines)
    print(f"{len(rows)} release pairs + {min(len(rows), len(docs))} doc pairs -> {out}; {dict(languages)}")
    return 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--candidates", type=Path)
    p.add_argument("--blocklist", type=Path)
    p.add_argument("--mix", type=Path, nargs="+", help="release pairs.jsonl files to make a training stage of")
    p.add_argument("--replay", type=Path, help="with --mix: doc pairs of an earlier stage")
    p.add_argument("--eval-sources", type=Path, nargs="*", default=[ROOT / "eval" / "sources.toml"])
    p.add_argument("--commits", type=Path, default=ROOT / "eval" / "commits.toml")
    p.add_argument("--sources", type=Path, default=Path(__file__).resolve().parent / "sources.toml")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--workers", type=int, default=6)
    p.add_argument("--seed", type=int, default=20261126)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.mix:
        if args.replay is None:
            raise SystemExit("--mix needs --replay")
        return mix(args.mix, args.replay, args.out, args.seed)
    if args.candidates is None or args.blocklist is None:
        raise SystemExit("--candidates and --blocklist are required (or --mix)")
    related = tomllib.loads(args.sources.read_text(encoding="utf-8")).get("related", {})
    blocklist = fetch.load_blocklist(args.blocklist)
    # Both splits of the commit task: dev is where choices are made, so it stays unseen too.
    evaluated = (
        fetch.eval_names(args.eval_sources, related)
        | fetch.commit_task_names(args.commits, "held-out")
        | fetch.commit_task_names(args.commits, "dev")
    )
    specs = sorted({ln.strip() for ln in args.candidates.read_text().splitlines() if ln.strip() and ":" in ln})
    random.Random(args.seed).shuffle(specs)  # a run stopped early is a random sample
    refused: list[dict[str, str]] = []
    allowed: list[str] = []
    for spec in specs:
        registry, name = spec.split(":", 1)
        try:
            fetch.check_excluded(fetch.Package(registry, name, names=sorted(fetch.aliases(name))), blocklist, evaluated)
            allowed.append(spec)
        except fetch.Refused as exc:
            refused.append({"spec": spec, "why": str(exc)})
    args.out.mkdir(parents=True, exist_ok=True)
    counts: Counter[str] = Counter()
    # Written as it goes, so that a run stopped early leaves a consistent (smaller) build.
    with (
        (args.out / "pairs.jsonl").open("w", encoding="utf-8") as out,
        (args.out / "manifest.jsonl").open("w", encoding="utf-8") as manifest,
        Pool(args.workers) as pool,
    ):
        for n, result in enumerate(pool.imap_unordered(mine_package, allowed), start=1):
            if "refused" in result:
                refused.append({"spec": result["spec"], "why": result["refused"]})
                continue
            for pair in result.pop("pairs"):
                out.write(json.dumps(pair, sort_keys=True) + "\n")
                counts[result["spec"]] += 1
            manifest.write(json.dumps({**result, "pairs": counts[result["spec"]]}, sort_keys=True) + "\n")
            if n % 25 == 0:
                out.flush()
                manifest.flush()
                print(f"{n}/{len(allowed)} packages, {sum(counts.values())} pairs", flush=True)
    (args.out / "refused.json").write_text(json.dumps(refused, indent=1) + "\n")
    print(f"{sum(counts.values())} pairs from {len(counts)} of {len(specs)} packages ({len(refused)} refused)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
