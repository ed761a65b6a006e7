#!/usr/bin/env python3
"""Run `ragls eval` with another local model folder in place of the bundled one.

    XDG_CACHE_HOME=/tmp/eval-tuned .venv/bin/python scripts/embedder/eval_model.py \
        --model-dir DIR --model-name ragls-code-minilm -- eval GOLDEN.json ... --out FILE
    .venv/bin/python scripts/embedder/eval_model.py --query-model FILE -- eval --all --split dev

With only --query-model, the documents keep the bundled model (and its indexes and cache):
FILE embeds the short questions instead of the bundled query graph (train_query_gpu.py), and
--long-query-model the long ones.

DIR holds model.onnx and tokenizer.json as scripts/export_model.py writes them. The model
name becomes the embedder's model id, so neither the embedding cache nor an index can hand
back vectors of the other model. A measurement tool only: ragls itself has no such switch.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))

from ragls.embedding import bundled, onnx_local
from ragls.frontends.cli.main import main as ragls_main


def use_query_graphs(short: Path | None, long: Path | None) -> None:
    """Questions (under LONG_QUERY_TOKENS tokens: `short`; the others: `long`) embedded by
    other graphs than the documents' one, in this process only."""
    base = onnx_local.LocalOnnxEmbedder

    class QueryGraphs(base):  # type: ignore[misc, valid-type]
        def __init__(self, settings) -> None:  # type: ignore[no-untyped-def]
            super().__init__(settings)
            if short is not None:
                self._queries = self._session(1, model=str(short.resolve()))

        def _query_session(self, tokens: int):  # type: ignore[no-untyped-def]
            if tokens < onnx_local.LONG_QUERY_TOKENS:
                return self._queries
            if self._long_queries is None:  # the documents' graph unless `long` is given
                graph = str(long.resolve()) if long is not None else "model.onnx"
                self._long_queries = self._session(min(2, self._threads), model=graph)
            return self._long_queries

    onnx_local.LocalOnnxEmbedder = QueryGraphs  # type: ignore[misc]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", type=Path)
    parser.add_argument("--model-name")
    parser.add_argument("--query-model", type=Path, help="an ONNX graph for the short questions only")
    parser.add_argument("--long-query-model", type=Path, help="an ONNX graph for the long questions only")
    parser.add_argument("ragls_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    for given in (args.query_model, args.long_query_model):
        if given is not None and not given.is_file():
            parser.error(f"no such file: {given}")
    if args.query_model is not None or args.long_query_model is not None:
        use_query_graphs(args.query_model, args.long_query_model)
    if args.model_dir is not None:
        if not args.model_name:
            parser.error("--model-dir needs --model-name")
        for name in ("model.onnx", "tokenizer.json"):
            if not (args.model_dir / name).is_file():
                parser.error(f"{args.model_dir} has no {name}")
        # The files are loaded through onnx_local's names; the identity (model_id(), which keys the
        # indexes and the embedding cache) is bundled.py's.
        onnx_local.MODEL_DIR = bundled.MODEL_DIR = args.model_dir.resolve()
        onnx_local.MODEL_NAME = bundled.MODEL_NAME = args.model_name
    elif args.query_model is None and args.long_query_model is None:
        parser.error("give --model-dir and --model-name, or a query model")
    rest = args.ragls_args[1:] if args.ragls_args[:1] == ["--"] else args.ragls_args
    return ragls_main(rest)


if __name__ == "__main__":
    raise SystemExit(main())
