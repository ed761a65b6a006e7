"""Recall and false positives of the secret scan on the labelled corpus (secret_corpus.py).

    python -m ragls.evaluation.secret_eval [--misses] [--providers]      (make eval-secrets)

A secret counts as found when no piece of it survives `ragls.ingest.secrets.scan` of its snippet (as
file `path`); a near miss counts as a false positive when the scan redacts any of its lines.
Prints one row per family and per kind of near miss, then the totals against the goals."""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from ragls.evaluation.secret_corpus import Item, file_type, near_misses, secrets
from ragls.ingest.secrets import scan

# The goals (issue 51): nearly every secret, every provider token, few lines of ordinary code.
GOAL_RECALL = 0.98
GOAL_PROVIDER_RECALL = 1.0
GOAL_FALSE_POSITIVES = 0.02


def leaked(item: Item, text: str) -> bool:
    """Whether the secret, or a 12-character piece of it, is still in `text`."""
    s = item.secret
    pieces = {s} if len(s) < 24 else {s[:12], s[len(s) // 2 - 6 : len(s) // 2 + 6], s[-12:]}
    return any(p in text for p in pieces)


def found(item: Item) -> bool:
    return not leaked(item, scan(item.text, item.path).text)


def flagged(item: Item) -> bool:
    return scan(item.text, item.path).lines > 0


@dataclass(frozen=True, slots=True)
class Report:
    secrets: list[tuple[Item, bool]]  # (item, found)
    near_misses: list[tuple[Item, bool]]  # (item, flagged)

    @property
    def recall(self) -> float:
        return _share(ok for _, ok in self.secrets)

    @property
    def provider_recall(self) -> float:
        return _share(ok for item, ok in self.secrets if item.provider)

    @property
    def false_positive_rate(self) -> float:
        return _share(bad for _, bad in self.near_misses)

    def missed(self) -> list[Item]:
        return [item for item, ok in self.secrets if not ok]

    def false_positives(self) -> list[Item]:
        return [item for item, bad in self.near_misses if bad]


def _share(flags: Iterable[bool]) -> float:
    values = list(flags)
    return sum(values) / len(values) if values else 0.0


def evaluate() -> Report:
    return Report([(i, found(i)) for i in secrets()], [(i, flagged(i)) for i in near_misses()])


def _group(item: Item, by_provider: bool) -> str:
    return "provider token" if item.provider and not by_provider else item.family


def table(report: Report, by_provider: bool = False) -> str:
    rows = ["| family | secrets | found | recall |", "|---|---:|---:|---:|"]
    by: dict[str, list[bool]] = defaultdict(list)
    for item, ok in report.secrets:
        by[_group(item, by_provider)].append(ok)
    for family, oks in sorted(by.items()):
        rows.append(f"| {family} | {len(oks)} | {sum(oks)} | {_share(oks):.3f} |")
    providers = {item.family for item, _ in report.secrets if item.provider}
    rows.append(
        f"| **all** ({len(providers)} provider families) | {len(report.secrets)} | "
        f"{sum(ok for _, ok in report.secrets)} | **{report.recall:.3f}** |"
    )
    rows += ["", "| near miss | items | redacted | false positives |", "|---|---:|---:|---:|"]
    kinds: dict[str, list[bool]] = defaultdict(list)
    for item, bad in report.near_misses:
        kinds[item.family].append(bad)
    for kind, bads in sorted(kinds.items()):
        rows.append(f"| {kind} | {len(bads)} | {sum(bads)} | {_share(bads):.3f} |")
    rows.append(
        f"| **all** | {len(report.near_misses)} | {sum(b for _, b in report.near_misses)} | "
        f"**{report.false_positive_rate:.3f}** |"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--misses", action="store_true", help="also print every missed secret and false positive")
    ap.add_argument("--providers", action="store_true", help="one row per provider instead of one for them all")
    a = ap.parse_args(argv)
    report = evaluate()
    types = {file_type(i.path) for i, _ in report.secrets}
    print(f"{len(report.secrets)} secrets in {len(types)} file types, {len(report.near_misses)} near misses\n")
    print(table(report, a.providers))
    if a.misses:
        for item in report.missed():
            print(f"\nmissed {item.family} in {item.path}:\n  {item.text}")
        for item in report.false_positives():
            print(f"\nfalse positive ({item.family}) in {item.path}:\n  {item.text[:300]}")
    goals = [
        ("recall", report.recall, report.recall >= GOAL_RECALL, f">= {GOAL_RECALL}"),
        ("provider token recall", report.provider_recall, report.provider_recall >= GOAL_PROVIDER_RECALL,
         f">= {GOAL_PROVIDER_RECALL}"),
        ("false positives", report.false_positive_rate, report.false_positive_rate <= GOAL_FALSE_POSITIVES,
         f"<= {GOAL_FALSE_POSITIVES}"),
    ]  # fmt: skip
    print()
    for name, value, ok, goal in goals:
        print(f"{name}: {value:.3f} (goal {goal}) {'met' if ok else 'NOT MET'}")
    return 0 if all(ok for *_, ok, _ in goals) else 1


if __name__ == "__main__":
    raise SystemExit(main())
