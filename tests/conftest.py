"""Shared test helpers: the fixture workspace and a CI-aware tool check."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

pytest.register_assert_rewrite("tests.lsp_harness")
from tests.lsp_harness import start  # noqa: E402,F401  (fixture, shared by e2e and reliability)

FIXTURE = Path(__file__).parent / "fixtures" / "polyglot"
# The developer's own ~/.config/ragls/config.toml must not change what the tests see; tests
# that need a user config point RAGLS_CONFIG at their own file.
os.environ["RAGLS_CONFIG"] = str(Path(tempfile.gettempdir()) / "ragls-tests-no-user-config.toml")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    dest = tmp_path / "ws"
    shutil.copytree(FIXTURE, dest)
    return dest


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Shared by a test session: each workspace gets its own index (its path differs), but
    the embedding cache is shared, so the fixture is embedded once, not once per test."""
    d = tmp_path_factory.mktemp("ragls-cache")
    d.chmod(0o700)  # as ragls makes its cache: a looser one is fixed with a status warning
    return d


@pytest.fixture
def fresh_cache(tmp_path: Path) -> Path:
    d = tmp_path / "fresh-cache"
    d.mkdir(mode=0o700)
    return d


def require_tool(path: str | None, what: str) -> None:
    """Skip locally when a tool is missing; in CI a missing tool is a failure."""
    if path:
        return
    if IN_CI:
        pytest.fail(f"{what} is required in CI but was not found")
    pytest.skip(f"{what} not available")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked slow (each tens of seconds) run first: `make test` spreads the suite over
    pytest-xdist workers, which then end on short tests instead of one worker on a long one."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
