"""embedder.device: the bundled model on a GPU when asked, the CPU whenever CUDA cannot start.

Here (and in CI) onnxruntime is the CPU build, so `cuda` must fall back: same vectors as the
CPU embedder, the CPU's call sizes, and a warning the status carries to the user. The GPU path
itself is measured on a CUDA machine (docs/scaling.md)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort

from ragls.config import EmbedderSettings, Settings
from ragls.embedding.onnx_local import LocalOnnxEmbedder
from ragls.status import IndexCounters, build_status, index_status

COUNTERS = IndexCounters(
    state="ready",
    phase="ready",
    message=None,
    files_total=0,
    files_indexed=0,
    files_failed=0,
    skipped_by_reason={},
    chunks=0,
    lexical_done=0,
    searchable=0,
    last_indexed_at=None,
    cache_hits=0,
    cache_misses=0,
    embedded=0,
    snapshot=None,
    errors=[],
    workspace="",
)
TEXTS = ["def parse_config(path): return toml.load(path)", 'fn main() { println!("hi"); }', "x" * 900]


def test_cuda_without_a_cuda_provider_falls_back_to_the_cpu_with_a_warning() -> None:
    assert "CUDAExecutionProvider" not in ort.get_available_providers(), "this test needs the CPU build"
    cpu = LocalOnnxEmbedder(EmbedderSettings(threads=1))
    gpu = LocalOnnxEmbedder(EmbedderSettings(threads=1, device="cuda"))
    assert (cpu.device, cpu.device_warning) == ("cpu", "")
    assert gpu.device == "cpu"
    assert "no CUDA provider" in gpu.device_warning and "gpu extra" in gpu.device_warning
    np.testing.assert_allclose(gpu.embed_documents(TEXTS), cpu.embed_documents(TEXTS), atol=1e-6)
    assert gpu.batches(TEXTS) == cpu.batches(TEXTS)  # the CPU's call sizes, not the GPU's


def test_the_status_says_where_the_model_runs_and_why_not_on_the_gpu() -> None:
    settings = Settings()
    settings.embedder.device = "cuda"
    emb = LocalOnnxEmbedder(EmbedderSettings(threads=1, device="cuda"))
    st = build_status(None, settings, index_status(COUNTERS, settings, emb, None), warnings=["from settings"])
    assert st.embedder.device == "cpu"
    assert st.warnings == [emb.device_warning, "from settings"]
    plain = index_status(COUNTERS, Settings(), LocalOnnxEmbedder(EmbedderSettings(threads=1)), None)
    assert plain.embedder.device == "cpu" and plain.warnings == []


def test_long_queries_run_on_two_threads_short_ones_on_one() -> None:
    """A bug report embeds 256 tokens: two threads answer it sooner; a short query is quicker
    on one (docs/history/performance-log.md). Both give the documents' vector."""
    from ragls.embedding.onnx_local import LONG_QUERY_TOKENS

    report = "Crash when parsing an empty section header\n\n" + "Traceback: read_section raised IndexError\n" * 40
    emb = LocalOnnxEmbedder(EmbedderSettings(threads=8))
    assert emb._queries.get_session_options().intra_op_num_threads == 1
    short = emb.embed_query("parse a section header")
    assert emb._long_queries is None  # made on the first long query only
    long = emb.embed_query(report)
    assert emb._long_queries is not None
    assert emb._long_queries.get_session_options().intra_op_num_threads == 2
    assert len(emb._tok.encode(report).ids) >= LONG_QUERY_TOKENS
    for text, q in (("parse a section header", short), (report, long)):
        (d,) = emb.embed_documents([text])
        assert float(q @ d) > 0.999
    single = LocalOnnxEmbedder(EmbedderSettings(threads=1))
    single.embed_query(report)
    assert single._long_queries is None  # one thread allowed: the one query session
