"""The indexer's old import path, kept for the code that still uses it (ragls.evaluation, bench/,
eval/). The indexer is the package ragls.index now: import from its modules."""

from ragls.index.handle import ModelUnavailable
from ragls.index.state import ErrorEntry, Phase, Records
from ragls.index.worker import Indexer

__all__ = ["ErrorEntry", "Indexer", "ModelUnavailable", "Phase", "Records"]
