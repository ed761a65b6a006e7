#!/usr/bin/env python3
"""Issue -> files with a cross-encoder reranker over find_files' candidates (offline measurement).

    .venv/bin/python scripts/embedder/eval_reranker.py --model reranker.onnx --split dev \
        --mirrors /work/.mirror --dir /tmp/issues/evaldir [--dump candidates.jsonl]

Asks every issue question of eval/issues.toml's split exactly as `ragls eval --issues` does
(find_files: rag/retrieve with intent "change", 50 chunks, the file history; same checkouts and
cache under --dir), then scores the first N chunks with the reranker (train_reranker_gpu.py's
input: `[CLS] query [SEP] chunk [SEP]`, the query camelCase-split and cut to 128 tokens, the
chunk's embedding text to 192) and ranks files by first hit, for the reranker's order alone and
fused with find_files' order (RRF, k 5, the reranker weighted w). Prints Acc@1 / Acc@5 / MRR@10
per repository and their mean, and the reranker's median time per question on this machine.
--dump keeps the candidates so that another model can be scored without re-indexing (--from).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from pathlib import Path

import numpy as np

HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
HITS = 50
DEPTHS = (10, 20, 50)
WEIGHTS = (0.5, 1.0)


def candidates(split: str, config: Path, mirrors: Path, work: Path) -> list[dict]:
    from ragls.config import load_settings
    from ragls.evaluation.commits import checkout
    from ragls.evaluation.issues import _check, _git, load_config, load_questions, mirror_dir
    from ragls.evaluation.runner import idle_index
    from ragls.git import history as git_history
    from ragls.query.retrieval import Ask, Sources, retrieve, tuning_for

    settings = load_settings(None, ("eval", {"cacheDir": str(work / "ragls-cache")}))
    rows = []
    for repo in load_config(config).repo:
        if repo.split != split:
            continue
        git_dir = mirror_dir(mirrors, repo.github)
        kept = [q for q in load_questions(config, repo) if not _check(git_dir, repo.head, q)]
        kept.sort(key=lambda q: int(_git(git_dir, "log", "-1", "--format=%ct", q.parent).strip()))
        tree, index_file = work / "issues" / repo.name / "tree", work / "issues" / repo.name / "index"
        for q in kept:
            checkout(git_dir, q.parent, tree, index_file)
            idx = idle_index(tree, settings)
            try:
                rs = settings.retrieval
                history = git_history.load(git_dir, q.parent, rs.git_history_commits)
                index = Sources(
                    idx.handle.store,
                    idx.handle.embedder,
                    names=idx.handle.cache,
                    history=history,
                    files=idx.indexed_paths,
                )
                hits = retrieve(index, rs, Ask(q.text(), HITS, 0, tuning=tuning_for("change"))).hits
            finally:
                idx.stop()
            rows.append(
                {
                    "repo": repo.name,
                    "gold": q.files,
                    "text": q.text(),
                    "hits": [(h.path, h.symbol, h.content[:4000]) for h in hits],
                }
            )
            print(f"[{repo.name}] {len(rows)}", flush=True)
    return rows


class Reranker:
    def __init__(self, model: Path, threads: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        self.sess = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
        root = Path(__file__).resolve().parents[2]
        self.tok = Tokenizer.from_file(str(root / "server/ragls/embedding/model/tokenizer.json"))
        self.tok.no_truncation()
        self.tok.no_padding()

    def _ids(self, text: str, n: int) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False).ids[:n]

    def scores(self, query: str, chunks: list[str]) -> np.ndarray:
        q = self._ids(HUMP.sub(" ", query), 128)
        rows = [[101, *q, 102, *self._ids(c, 192), 102] for c in chunks]
        shape = (len(rows), max(map(len, rows)))
        ids, mask, types = (np.zeros(shape, np.int64) for _ in range(3))
        for i, r in enumerate(rows):
            ids[i, : len(r)] = r
            mask[i, : len(r)] = 1
            types[i, len(q) + 2 : len(r)] = 1
        return self.sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]


def orders(scores: np.ndarray, n: int) -> dict[str, list[int]]:
    """Chunk orders of each variant: find_files', the reranker's over the first `depth`, fused."""
    out = {"find_files": list(range(n))}
    for depth in DEPTHS:
        d = min(depth, n)
        by_ce = sorted(range(d), key=lambda i: -scores[i])
        ce_rank = {i: r for r, i in enumerate(by_ce)}
        out[f"reranker@{depth}"] = by_ce + list(range(d, n))
        for w in WEIGHTS:
            fused = sorted(range(d), key=lambda i: -(1 / (6 + i) + w / (6 + ce_rank[i])))
            out[f"rrf@{depth} w{w}"] = fused + list(range(d, n))
    return out


def main() -> int:
    from ragls.chunking.model import embedding_text
    from ragls.evaluation.issues import question_scores

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, required=True)
    p.add_argument("--split", default="dev")
    p.add_argument("--config", type=Path, default=Path("eval/issues.toml"))
    p.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    p.add_argument("--dir", type=Path, default=Path("/tmp/issues/evaldir"))
    p.add_argument("--dump", type=Path, help="write the candidates here")
    p.add_argument("--from", dest="source", type=Path, help="read candidates from a --dump file")
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    if a.source:
        rows = [json.loads(line) for line in a.source.open(encoding="utf-8")]
    else:
        rows = candidates(a.split, a.config, a.mirrors, a.dir)
        if a.dump:
            a.dump.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ce = Reranker(a.model, a.threads)
    table: dict[str, dict[str, list[dict[str, float]]]] = {}
    took = []
    for r in rows:
        texts = [embedding_text(path, symbol, None, content) for path, symbol, content in r["hits"]]
        t0 = time.perf_counter()
        s = ce.scores(r["text"], texts) if texts else np.zeros(0)
        took.append(time.perf_counter() - t0)
        for name, order in orders(s, len(texts)).items():
            files = list(dict.fromkeys(r["hits"][i][0] for i in order))[:10]
            table.setdefault(name, {}).setdefault(r["repo"], []).append(question_scores(files, r["gold"]))
    print(f"reranker: median {statistics.median(took) * 1000:.0f} ms per question ({HITS} chunks, {a.threads} threads)")
    metrics = ("acc_at_1", "acc_at_5", "mrr_at_10")
    for name, repos in table.items():
        per = {rp: {m: float(np.mean([q[m] for q in qs])) for m in metrics} for rp, qs in sorted(repos.items())}
        mean = " / ".join(f"{np.mean([v[m] for v in per.values()]):.3f}" for m in metrics)
        cells = "  ".join(f"{rp} " + "/".join(f"{v[m]:.2f}" for m in metrics) for rp, v in per.items())
        print(f"{name:16} {mean}   {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
