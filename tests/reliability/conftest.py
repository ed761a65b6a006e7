"""Helpers for the reliability suite: generated workspaces and CLI runs."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

WORDS = (
    "parse render fetch store merge split encode decode validate schedule retry compress "
    "invoice ledger cache socket buffer token session report metric window cursor"
).split()


def write_module(root: Path, rel: str, seed: int, functions: int = 8, short: bool = False) -> None:
    """`short`: three-line functions, a chunk each as well, that cost about half as much to
    embed (fewer tokens) and take as much room in the index (its vectors, the embedding cache)."""
    rng = random.Random(seed)
    parts = []
    for i in range(functions):
        a, b = rng.sample(WORDS, 2)
        if short:
            parts.append(
                f"def {a}_{b}_{seed}_{i}(value):\n"
                f'    """{a.title()} the {b} for item {seed}-{i}."""\n'
                f"    return value + {i}\n"
            )
            continue
        parts.append(
            f"def {a}_{b}_{seed}_{i}(value, limit=10):\n"
            f'    """{a.title()} the {b} for item {seed}-{i} and return the result."""\n'
            f"    total = 0\n    for n in range(limit):\n        total += (value * {i} + n) % {seed + 7}\n"
            f"    return total\n"
        )
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(parts))


def generated_workspace(root: Path, files: int, functions: int = 8, short: bool = False) -> Path:
    for n in range(files):
        write_module(root, f"pkg{n % 5}/mod_{n}.py", n, functions, short)
    return root


def ragls_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "ragls", *args]


def run_cli(args: list[str], cache: Path, timeout: float = 300) -> tuple[int, Any, str]:
    env = {**os.environ, "RAGLS_CACHE_DIR": str(cache)}
    p = subprocess.run(ragls_cmd(*args), capture_output=True, text=True, timeout=timeout, env=env)
    try:
        out = json.loads(p.stdout) if p.stdout.strip().startswith("{") else p.stdout
    except json.JSONDecodeError:
        out = p.stdout
    return p.returncode, out, p.stderr


@pytest.fixture
def rcache(tmp_path: Path) -> Path:
    d = tmp_path / "cache"
    d.mkdir()
    return d
