"""Build one project's golden set: stripped source copy + golden.json."""

from __future__ import annotations

import ast
import random
import re
import shutil
import tempfile
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

from goldenbuild.extract import FunctionDoc, extract, language_of
from goldenbuild.sources import Source, fetch
from goldenbuild.sources import extract as unpack
from goldenbuild.strip import Edit, Stripped, strip_lines
from ragls.evaluation.golden import GoldenQuery, GoldenSet, dump_golden

# A summary shared by more functions than this is boilerplate (generated forwarders, aliases);
# it cannot be answered meaningfully, so it is not asked.
MAX_ANSWERS = 5
# Bigger files are generated or bundled code, not what people search.
MAX_FILE_BYTES = 512 * 1024


@dataclass
class ProjectStats:
    name: str
    label: str
    language: str
    split: str
    golden: str
    files: int
    lines: int
    functions: int
    documented: int
    candidates: int
    queries: int
    seconds: float
    sha256: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@cache
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Shell glob over POSIX paths: `**/` spans folders, `*` and `?` stay within one."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


def _matches(path: str, patterns: list[str]) -> bool:
    return any(_glob_regex(p).match(path) for p in patterns)


def select_files(root: Path, source: Source) -> list[str]:
    chosen: list[str] = []
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if not _matches(rel, source.include_globs()) or _matches(rel, source.exclude):
            continue
        if path.stat().st_size > MAX_FILE_BYTES:
            continue
        chosen.append(rel)
    return chosen


def _check_mapping(item: FunctionDoc, old: list[str], stripped: Stripped, new: list[str], edited: set[int]) -> None:
    """The definition's first and last lines must be unchanged at their new numbers (unless
    an edit replaced them: a nested function whose lone docstring ends its parent)."""
    start, end = stripped.map_range(item.start_line, item.end_line)
    for old_line, new_line in ((item.start_line, start), (item.end_line, end)):
        if old_line not in edited and new[new_line - 1] != old[old_line - 1]:
            raise AssertionError(f"{item.path}: {item.symbol} moved wrongly to {start}-{end}")


def strip_file(rel: str, data: bytes, language: str | None = None) -> tuple[bytes, list[FunctionDoc]]:
    """Stripped file content and its functions with line ranges in the stripped copy."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data, []  # kept in the corpus as it is, never asked about
    functions = extract(rel, data, language)
    edits = [Edit(f.doc_lines[0], f.doc_lines[1], tuple(f.replacement)) for f in functions if f.doc_lines is not None]
    stripped = strip_lines(text, edits)
    old_lines, new_lines = text.split("\n"), stripped.text.split("\n")
    edited = {line for e in edits for line in range(e.start, e.end + 1)}
    for item in functions:
        _check_mapping(item, old_lines, stripped, new_lines, edited)
        item.start_line, item.end_line = stripped.map_range(item.start_line, item.end_line)
    if language_of(rel) == "python" and edits:
        ast.parse(stripped.text)  # the stripped copy must stay valid Python
    return stripped.text.encode("utf-8"), functions


def asks_about(rel: str, language: str) -> bool:
    """Questions come only from files in the project's own language (a TSX project's `.ts`
    helpers are indexed, but its questions are about `.tsx` code); a C++ project's `.h` files
    are C++."""
    found = language_of(rel)
    return found == language or (language == "cpp" and found == "c")


def _normalise(query: str) -> str:
    return re.sub(r"\W+", " ", query.lower()).strip()


def choose_queries(functions: list[FunctionDoc], source: Source, cap: int, seed: int) -> list[GoldenQuery]:
    groups: dict[str, list[FunctionDoc]] = defaultdict(list)
    for item in functions:
        if item.eligible and item.query is not None:
            groups[_normalise(item.query)].append(item)
    keys = sorted(
        (key for key, items in groups.items() if len(items) <= MAX_ANSWERS),
        key=lambda key: (groups[key][0].path, groups[key][0].start_line, key),
    )
    # A string seed is hashed with SHA-512 by random, so the sample is stable across runs
    # and machines; the project name makes each project's sample independent.
    rng = random.Random(f"{seed}:{source.name}")
    picked = sorted(rng.sample(range(len(keys)), min(cap, len(keys))))
    queries: list[GoldenQuery] = []
    for number, index in enumerate(picked, start=1):
        items = groups[keys[index]]
        queries.append(
            GoldenQuery(
                id=f"{source.name}-{number:04d}",
                query=items[0].query or "",
                files=[f.path for f in items],
                symbols=[f.symbol for f in items],
                lines=[(f.start_line, f.end_line) for f in items],
            )
        )
    return queries


def build_project(source: Source, downloads: Path, out: Path, cap: int, seed: int) -> ProjectStats:
    began = time.perf_counter()
    archive = fetch(source, downloads)
    project_dir = out / source.name
    if project_dir.exists():
        shutil.rmtree(project_dir)
    src = project_dir / "src"
    functions: list[FunctionDoc] = []
    total_lines = 0
    with tempfile.TemporaryDirectory(prefix=f"ragls-eval-{source.name}-") as tmp:
        unpack(archive, Path(tmp))
        root = Path(tmp) / source.subdir
        if not root.is_dir():
            raise RuntimeError(f"{source.label}: {source.subdir} not found in {archive.name}")
        files = select_files(root, source)
        for rel in files:
            data, found = strip_file(rel, (root / rel).read_bytes(), source.language)
            if not asks_about(rel, source.language):
                for item in found:
                    item.public = False  # indexed as context, never asked about
            target = src / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            total_lines += data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
            functions.extend(found)
    queries = choose_queries(functions, source, source.max_queries or cap, seed)
    if not queries:
        raise RuntimeError(f"{source.label}: no usable documented functions found")
    golden = GoldenSet(name=source.label, language=source.language, root="src", queries=queries)
    dump_golden(golden, project_dir / "golden.json")
    return ProjectStats(
        name=source.name,
        label=source.label,
        language=source.language,
        split=source.split,
        golden=f"{source.name}/golden.json",
        files=len(files),
        lines=total_lines,
        functions=len(functions),
        documented=sum(1 for f in functions if f.doc_lines is not None),
        candidates=sum(1 for f in functions if f.eligible),
        queries=len(queries),
        seconds=round(time.perf_counter() - began, 2),
        sha256=source.sha256,
    )
