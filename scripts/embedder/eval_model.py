#!/usr/bin/env python3
"""Run `ragls eval` with another local model folder in place of the bundled one.

    XDG_CACHE_HOME=/tmp/eval-tuned .venv/bin/python scripts/embedder/eval_model.py \
        --model-dir DIR --model-name ragls-code-minilm -- eval GOLDEN.json ... --out FILE

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--model-name", required=True)
    parser.add_argument("ragls_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    for name in ("model.onnx", "tokenizer.json"):
        if not (args.model_dir / name).is_file():
            parser.error(f"{args.model_dir} has no {name}")
    # The files are loaded through onnx_local's names; the identity (model_id(), which keys the
    # indexes and the embedding cache) is bundled.py's.
    onnx_local.MODEL_DIR = bundled.MODEL_DIR = args.model_dir.resolve()
    onnx_local.MODEL_NAME = bundled.MODEL_NAME = args.model_name
    rest = args.ragls_args[1:] if args.ragls_args[:1] == ["--"] else args.ragls_args
    return ragls_main(rest)


if __name__ == "__main__":
    raise SystemExit(main())
