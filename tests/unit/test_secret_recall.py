"""The secret scan against its labelled corpus (ragls.evaluation.secret_corpus): the goals of
issue 51 hold (`make eval-secrets` prints the same figures per family), every provider rule is
exercised by the corpus, and the gates never spare a line a detector would flag there."""

from __future__ import annotations

import pytest

from ragls.evaluation import secret_eval
from ragls.evaluation.secret_corpus import KEYWORD, PRIVATE_KEY, URL, file_type, near_misses, secrets
from ragls.ingest.secret_gates import PROVIDER_TOKENS, candidates
from ragls.ingest.secrets import _line_hit
from tests.unit.test_secret_prefilter import _assert_gates_cover


@pytest.fixture(scope="module")
def report() -> secret_eval.Report:
    return secret_eval.evaluate()


def test_the_corpus_is_large_varied_and_labelled() -> None:
    found, misses = secrets(), near_misses()
    assert len(found) >= 150 and len(misses) >= len(found)
    assert len({file_type(i.path) for i in found}) >= 12
    families = {i.family for i in found}
    assert {KEYWORD, PRIVATE_KEY, URL} <= families and sum(i.provider for i in found) >= len(PROVIDER_TOKENS)
    assert all(i.secret and i.secret in i.text for i in found)
    assert all(not i.secret for i in misses)
    assert secrets() == found  # a fixed seed: every run measures the same items


def test_the_goals_hold(report: secret_eval.Report) -> None:
    assert report.recall >= secret_eval.GOAL_RECALL, [i.text for i in report.missed()]
    assert report.provider_recall >= secret_eval.GOAL_PROVIDER_RECALL, [i.text for i in report.missed() if i.provider]
    fps = [i.text[:120] for i in report.false_positives()]
    assert report.false_positive_rate <= secret_eval.GOAL_FALSE_POSITIVES, fps


def test_every_provider_rule_finds_its_token_in_the_corpus() -> None:
    # A rule the corpus never fires is a rule nothing checks: each must find a token by itself.
    fired: set[str] = set()
    for item in secrets():
        if not item.provider:
            continue
        for line in item.text.split("\n"):
            fired |= {
                d
                for d in candidates(line).get(0, [])
                if d.startswith("ragls:token_") and _line_hit(line, item.path, [d])
            }
    assert {f"ragls:token_{name}" for name in PROVIDER_TOKENS} <= fired


def test_gates_cover_the_detectors_on_the_labelled_corpus() -> None:
    # Every detector run on every line, no gate asked, must find nothing the gates spared.
    assert all(_assert_gates_cover(i.text, i.path) >= 1 for i in secrets())
    for item in near_misses():
        _assert_gates_cover(item.text, item.path)


def test_the_report_names_every_family(report: secret_eval.Report) -> None:
    table = secret_eval.table(report)
    for family in ("provider token", "keyword in context", "private key", "URL credential", "JWT"):
        assert f"| {family} |" in table
    assert "| placeholder token |" in table and "| **all** |" in table
