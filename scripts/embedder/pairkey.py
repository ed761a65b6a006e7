"""What the miner and the trainer must agree on: a pair's key and how a question is embedded."""

from __future__ import annotations

import hashlib
import re

HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")  # ragls.chunking.model.split_humps


def pair_key(query: str, code: str) -> str:
    """Key of a (question, code) pair in negatives.jsonl (one pair, however often listed)."""
    return hashlib.sha1(f"{query.lower()}\0{code}".encode()).hexdigest()


def question_text(query: str) -> str:
    """The question as ragls embeds it: camelCase split."""
    return HUMP.sub(" ", query)
