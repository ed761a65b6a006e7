"""`ragls eval`: score golden sets and print a markdown table (ragls vs BM25 baselines)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ragls.config import Settings, load_settings
from ragls.evaluation.runner import BM25_FUNCTIONS, BM25_WINDOWS, DEFAULT, SetResult, run_golden

METRICS = [
    "ctx_recall_4k",
    "mrr_at_10",
    "recall_at_1",
    "recall_at_5",
    "recall_at_10",
    "precision_at_5",
    "ndcg_at_10",
    "chunk_precision_at_5",
    "precise_recall_at_5",
    "latency_p50_ms",
    "latency_p95_ms",
]
HEAD = ["ctxR@4k", "MRR@10", "R@1", "R@5", "R@10", "P@5", "nDCG@10", "chunk prec.", "precise R@5", "p50 ms", "p95 ms"]
# The per-language summary: the four figures the issue asks for, per system.
SUMMARY = [
    ("ctx_recall_4k", "ctxR@4k"),
    ("mrr_at_10", "MRR@10"),
    ("recall_at_5", "R@5"),
    ("precise_recall_at_5", "pR@5"),
]
SUMMARY_ROWS = [(DEFAULT, "ragls"), (BM25_WINDOWS, "BM25 win"), (BM25_FUNCTIONS, "BM25 fn")]


def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragls-eval"


def add_eval_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("eval", help="score golden sets (query -> expected files) against a real index")
    p.add_argument("golden", nargs="*", help="golden-set files (.json or .toml)")
    p.add_argument("--all", action="store_true", help="every set listed in DIR/manifest.json")
    p.add_argument("--dir", type=Path, default=default_dir(), help="where eval/build_golden.py wrote the sets")
    p.add_argument(
        "--split",
        choices=["dev", "held-out", "sealed"],
        help="with --all or --issues: only the sets or repositories of this split (sealed ones: only when named)",
    )
    p.add_argument("--cache", type=Path, help="indexes and embedding cache (default DIR/ragls-cache)")
    p.add_argument("--baselines", action="store_true", help="also score BM25 on the same queries")
    p.add_argument("--no-ablations", action="store_true", help="score the default configuration only")
    p.add_argument("--out", type=Path, help="write all figures as JSON here")
    p.add_argument("--commits", type=Path, metavar="TOML", help="also run the commit message -> files task")
    p.add_argument("--issues", type=Path, metavar="TOML", help="also run the issue -> files task (eval/issues.toml)")
    p.add_argument(
        "--mirrors",
        type=Path,
        default=Path(os.environ.get("RAGLS_EVAL_MIRRORS") or default_dir() / "mirrors"),
        help="folder of bare git mirrors (<owner>+<name>/repo) for --commits and --issues",
    )
    p.add_argument(
        "--ranker",
        metavar="MODEL",
        nargs="?",
        const="",
        help="also score the learned ranker (query/ranker.py) from this model file, or the bundled one",
    )
    p.add_argument(
        "--dump-features", type=Path, metavar="DIR", help="write each set's ranker training rows there (ranker_data.py)"
    )
    p.add_argument(
        "--feedback",
        metavar="PATH",
        help="instead: replay the questions rated about this folder against its index today (docs/feedback.md)",
    )
    p.add_argument("--json", action="store_true", help="with --feedback: print the replay as JSON")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_eval)


def _mean_rows(results: list[SetResult]) -> dict[str, dict[str, float]]:
    """Query-weighted mean of each row over the given sets (latencies: the median of sets)."""
    rows: dict[str, dict[str, float]] = {}
    for label in _labels(results):
        row: dict[str, float] = {}
        # A row may cover fewer queries than its set (derived lookup queries): weigh by its own.
        counts = [(r, int(r.rows[label].get("queries", r.queries))) for r in results if label in r.rows]
        total = sum(n for _, n in counts)
        for m in METRICS:
            vals = [(r.rows[label].get(m, float("nan")), n) for r, n in counts]
            vals = [(v, n) for v, n in vals if v == v]
            if not vals:
                row[m] = float("nan")
            elif m.startswith("latency"):
                row[m] = sorted(v for v, _ in vals)[len(vals) // 2]
            else:
                row[m] = sum(v * n for v, n in vals) / sum(n for _, n in vals)
        row["queries"] = float(total)
        rows[label] = row
    return rows


def _overall(results: list[SetResult]) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, dict[str, float]]]]:
    """Per-language means, then their mean: languages weigh equally, so one big language
    cannot hide another."""
    by_lang: dict[str, list[SetResult]] = {}
    for r in results:
        by_lang.setdefault(r.language, []).append(r)
    lang_rows = {lang: _mean_rows(rs) for lang, rs in sorted(by_lang.items())}
    overall: dict[str, dict[str, float]] = {}
    for label in _labels(results):
        have = [lr[label] for lr in lang_rows.values() if label in lr]
        overall[label] = {m: _nanmean([row[m] for row in have]) for m in METRICS}
    return overall, lang_rows


def _nanmean(values: list[float]) -> float:
    kept = [v for v in values if v == v]
    return sum(kept) / len(kept) if kept else float("nan")


def _labels(results: list[SetResult]) -> list[str]:
    """Row labels in first-seen order over all sets."""
    return list(dict.fromkeys(label for r in results for label in r.rows))


def _cell(value: float | None) -> str:
    return "–" if value is None or value != value else f"{value:.3f}"


def summary_table(lang_rows: dict[str, dict[str, dict[str, float]]]) -> str:
    """Languages down, (system, metric) across, plus the mean over languages: the table the
    issue's goals are stated in."""
    systems = [(label, short) for label, short in SUMMARY_ROWS if any(label in rows for rows in lang_rows.values())]
    head = [f"{short} {name}" for _, short in systems for _, name in SUMMARY]
    lines = ["| language (queries) | " + " | ".join(head) + " |", "|---|" + "---:|" * len(head)]
    means: dict[tuple[str, str], list[float]] = {}
    for lang, rows in sorted(lang_rows.items()):
        n = int(rows.get(DEFAULT, next(iter(rows.values())))["queries"])
        cells = []
        for label, _ in systems:
            for metric, _ in SUMMARY:
                value = rows.get(label, {}).get(metric)
                cells.append(_cell(value))
                if value is not None:
                    means.setdefault((label, metric), []).append(value)
        lines.append(f"| {lang} ({n}) | " + " | ".join(cells) + " |")
    mean_cells = [_cell(_nanmean(means.get((label, m), []))) for label, _ in systems for m, _ in SUMMARY]
    lines.append("| **mean over languages** | " + " | ".join(mean_cells) + " |")
    return "\n".join(lines)


def _splits_of(manifest: Path) -> dict[str, str]:
    """golden.json path (as listed) -> its project's split, from the builder's manifest."""
    if not manifest.is_file():
        return {}
    projects = json.loads(manifest.read_text()).get("projects", [])
    return {str((manifest.parent / p["golden"]).resolve()): p.get("split", "") for p in projects}


def _table(rows: dict[str, dict[str, float]]) -> str:
    lines = ["| configuration | " + " | ".join(HEAD) + " |", "|---|" + "---:|" * len(HEAD)]
    for label, row in rows.items():
        cells = [f"{row[m]:.1f}" if m.startswith("latency") and row[m] == row[m] else _cell(row[m]) for m in METRICS]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cmd_eval(a: argparse.Namespace) -> int:
    if a.feedback:
        from ragls.frontends.cli.feedback_replay import cmd_eval_feedback

        return cmd_eval_feedback(a)
    paths = [Path(g) for g in a.golden]
    if a.all:
        manifest = a.dir / "manifest.json"
        if not manifest.exists():
            raise SystemExit(f"ragls: {manifest} not found; run `python eval/build_golden.py` first")
        projects = json.loads(manifest.read_text())["projects"]
        # The sealed split is scored only when asked by name (at the start and the end of an issue).
        paths += [
            a.dir / p["golden"]
            for p in projects
            if p.get("split") == a.split or (a.split is None and p.get("split") != "sealed")
        ]
    if not paths and not a.commits and not a.issues:
        raise SystemExit("ragls eval: give golden-set files, --all, --commits or --issues")
    settings: Settings = load_settings(None, ("eval", {"cacheDir": str(a.cache or a.dir / "ragls-cache")}))
    commit_results = []
    if a.commits:
        from ragls.evaluation.commits import run_commits

        commit_results = run_commits(a.commits, a.mirrors, settings, a.dir / "commits", quiet=a.quiet)
        for r in commit_results:
            if r.skipped:
                print(f"ragls eval: commits task, {r.name} skipped: {r.skipped}", file=sys.stderr)
    issue_results = []
    if a.issues:
        from ragls.evaluation.issues import run_issues

        # --split narrows this task too: held-out repositories are looked at only to confirm.
        issue_results = run_issues(
            a.issues,
            a.mirrors,
            settings,
            a.dir / "issues",
            quiet=a.quiet,
            split=a.split,
            ranker=a.ranker,
            dump=a.dump_features,
        )
        for ir in issue_results:
            for why in ir.dropped:
                print(f"ragls eval: issues task, question dropped: {why}", file=sys.stderr)
            if ir.skipped:
                print(f"ragls eval: issues task, {ir.name} skipped: {ir.skipped}", file=sys.stderr)
    if not paths:
        print(_task_sections(commit_results, issue_results))
        if a.out:
            payload = _task_payload(commit_results, issue_results)
            a.out.parent.mkdir(parents=True, exist_ok=True)
            a.out.write_text(json.dumps(payload, indent=2) + "\n")
        return 0
    results: list[SetResult] = []
    split_of = _splits_of(a.dir / "manifest.json")
    for p in paths:
        if not a.quiet:
            print(f"eval: {p}", file=sys.stderr, flush=True)
        result = run_golden(
            p,
            settings,
            baselines=a.baselines,
            ablations=not a.no_ablations,
            quiet=a.quiet,
            ranker=a.ranker,
            dump=a.dump_features,
        )
        result.split = split_of.get(str(p.resolve()))
        results.append(result)
    overall, lang_rows = _overall(results)
    out: list[str] = ["## Mean over languages (each language weighs equally)", "", _table(overall), ""]
    splits: dict[str, dict[str, dict[str, float]]] = {}
    split_langs: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for title in ("dev", "held-out", "sealed"):
        part = [r for r in results if r.split == title]
        if not part:
            continue
        splits[title], split_langs[title] = _overall(part)
        names = ", ".join(r.name for r in part)
        out += [f"## {title} split, per language ({names})", "", summary_table(split_langs[title]), ""]
        out += [f"## {title} split, mean over languages", "", _table(splits[title]), ""]
    for lang, rows in lang_rows.items():
        n = int(next(iter(rows.values()))["queries"])  # the default row: every query
        out += [f"### {lang} ({n} queries)", "", _table(rows), ""]
    out += ["### Sets", "", "| set | language | queries | files | chunks | index s |", "|---|---|---:|---:|---:|---:|"]
    out += [f"| {r.name} | {r.language} | {r.queries} | {r.files} | {r.chunks} | {r.index_seconds} |" for r in results]
    if commit_results or issue_results:
        out += [_task_sections(commit_results, issue_results), ""]
    print("\n".join(out))
    if a.out:
        payload: dict[str, Any] = {
            "overall": overall,
            "splits": splits,
            "split_languages": split_langs,
            "languages": lang_rows,
            "sets": [r.__dict__ for r in results],
            **_task_payload(commit_results, issue_results),
        }
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


def _task_sections(commit_results: list[Any], issue_results: list[Any]) -> str:
    """Markdown of the repository tasks that ran (commit message -> files, issue -> files)."""
    parts: list[str] = []
    if commit_results:
        from ragls.evaluation.commits import commits_table

        parts += ["## Commit message -> files", "", commits_table(commit_results), ""]
    if issue_results:
        from ragls.evaluation.issues import issues_tables

        parts += ["## Issue -> files", "", issues_tables(issue_results), ""]
    return "\n".join(parts)


def _task_payload(commit_results: list[Any], issue_results: list[Any]) -> dict[str, Any]:
    """The JSON of those tasks; "commits" is always there, as it was before the issue task."""
    payload: dict[str, Any] = {"commits": [r.__dict__ for r in commit_results]}
    if issue_results:
        from ragls.evaluation.issues import issues_payload

        payload["issues"] = issues_payload(issue_results)
    return payload
