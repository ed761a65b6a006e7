"""Hard-negative mining for the embedder's training (scripts/embedder/mine_negatives.py), with
the real bundled model: a negative is a near miss from the same package, never the answer
itself nor a chunk documented by the same sentence."""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "embedder"))

from mine_negatives import package_negatives  # noqa: E402
from pairkey import pair_key, question_text  # noqa: E402

from ragls.config import EmbedderSettings  # noqa: E402
from ragls.embedding import make_embedder  # noqa: E402


def pair(query: str, code: str) -> dict[str, str]:
    return {"package": "shop", "query": query, "code": code}


PAIRS = [
    pair(
        "Return the total price of the items in the cart.",
        "def cart_total(items):\n    return sum(i.price for i in items)",
    ),
    pair(
        "Return the total weight of the items in the cart.",
        "def cart_weight(items):\n    return sum(i.kg for i in items)",
    ),
    pair(
        "Open a TCP connection to the payment server.",
        "def connect(host):\n    return socket.create_connection((host, 443))",
    ),
    pair(
        "Parse the date printed on a receipt.",
        "def parse_receipt_date(text):\n    return datetime.strptime(text, '%d.%m.%Y')",
    ),
    # Two overloads documented by the same sentence: neither is the other's negative.
    pair("Add an item to the cart.", "def add(cart, item):\n    cart.items.append(item)"),
    pair("Add an item to the cart.", "def add_many(cart, item, n):\n    cart.items.extend([item] * n)"),
]


def test_negatives_are_near_misses_of_the_same_package() -> None:
    embedder = make_embedder(EmbedderSettings(max_tokens=160))
    got = package_negatives(PAIRS, embedder, pool_size=1, rng=random.Random(1))
    assert set(got) == {pair_key(p["query"], p["code"]) for p in PAIRS}
    by_code = {p["code"]: p for p in PAIRS}
    for p in PAIRS:
        neg = got[pair_key(p["query"], p["code"])]
        assert neg in by_code and neg != p["code"]
        assert by_code[neg]["query"].lower() != p["query"].lower()
    # Pool of one: the most similar other chunk. The price question's nearest miss is the weight sum.
    assert got[pair_key(PAIRS[0]["query"], PAIRS[0]["code"])] == PAIRS[1]["code"]


def test_keys_ignore_question_case_and_questions_are_split_like_ragls() -> None:
    assert pair_key("Parse the header.", "x") == pair_key("parse the HEADER.", "x")
    assert pair_key("Parse the header.", "x") != pair_key("Parse the header.", "y")
    assert question_text("Calls parseHeader on rawBytes") == "Calls parse Header on raw Bytes"
