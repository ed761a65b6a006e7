"""The bundled, offline embedder: ragls-code-minilm-l6-v6 (all-MiniLM-L6-v2 fine-tuned on
doc-to-code pairs) as int8 ONNX, via onnxruntime and tokenizers (no torch). Provenance and
training in docs/embedding-model.md."""

from __future__ import annotations

import logging
import os
import threading

import numpy as np
import onnxruntime as ort
from tokenizers import Encoding, Tokenizer

from ragls.config import EmbedderSettings
from ragls.embedding.bundled import DIMENSION, MODEL_DIR, MODEL_NAME, model_id

__all__ = ["DIMENSION", "MODEL_DIR", "MODEL_NAME", "LocalOnnxEmbedder", "model_id"]
log = logging.getLogger(__name__)
# Rows x padded tokens per document batch: 2 rows of 256 tokens, 4 of 128. ONNX Runtime's
# arena keeps the largest call's buffers, so the resident memory grows with it (~1 GB at
# 32 x 256, ~320 MB at 8 x 256, bench/memprobe.py). Smaller calls are also faster on these
# cores (their activations stay in cache): 400 real chunks, 2 threads, three runs each,
# 1,024 tokens 58-63 chunks/s and 265 MB peak, 512 tokens 71-78 chunks/s and 214 MB;
# 256-768 measured within the noise of 512.
_TOKEN_BUDGET = 512
# On a GPU a call is cheap to launch and wide calls keep it busy; its memory is the card's.
_GPU_TOKEN_BUDGET = 16_384
_GPU_MIN_ROWS = 128
_CUDA = "CUDAExecutionProvider"
# Texts tokenized at once to plan a window: an encoding keeps every token of its text (the part
# past max_tokens too, as overflow), so a 512-chunk window's encodings took 60-170 MB for the
# moment of planning, a spike in the server's peak RSS (in-process at 150,000 chunks: max 981 MB
# with whole-window planning, 849 MB by slices).
_PLAN_SLICE = 64
# A query of at least this many tokens runs on two threads (LocalOnnxEmbedder.__init__).
LONG_QUERY_TOKENS = 64


class LocalOnnxEmbedder:
    provider = "local"

    def __init__(self, settings: EmbedderSettings) -> None:
        self.model_id = model_id(settings.max_tokens)
        self.dimension = DIMENSION
        self.batch_size = settings.batch_size
        self._tok = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
        # The packaged tokenizer pads and truncates at 128; code needs more context.
        self._tok.enable_truncation(max_length=settings.max_tokens)
        self._tok.no_padding()
        self._threads = settings.threads or (os.cpu_count() or 1)
        self.device, self.device_warning = "cpu", ""
        self._budget = _TOKEN_BUDGET
        # The documents' session on the CPU is made on first use: a warm start whose chunks all
        # have cached vectors never embeds a document, and each session costs ~0.2 s of CPU to
        # optimise the graph and its own copy of the weights. CUDA is tried now, since the status
        # reports where documents are embedded (and the fallback's warning) from the start.
        self._docs: ort.InferenceSession | None = None
        self._docs_lock = threading.Lock()
        if settings.device == "cuda":
            self._docs = self._cuda_session(self._threads)
            if self._docs is None:
                self._docs = self._session(self._threads)
        if self.device_warning:
            log.warning("%s", self.device_warning)
        # Queries get their own sessions so that a chat request never waits behind a background
        # indexing batch: one thread for a short query; two for a long one (a bug report fills
        # the model's 256 tokens: on two cores one thread took 84 ms for it, two 58 ms, and with
        # both cores busy at nice 5, 83 and 67 ms), made on the first long query. A short query
        # answered 4-5 ms sooner through the server on one thread.
        self._queries = self._session(1)
        self._long_queries: ort.InferenceSession | None = None
        self._query_lock = threading.Lock()

    def _cuda_session(self, threads: int) -> ort.InferenceSession | None:
        """The documents' session on the GPU, or None (and why, in device_warning) when CUDA
        cannot start: the CPU build of onnxruntime, no driver, missing CUDA libraries. ONNX
        Runtime itself falls back to the CPU silently when the CUDA provider fails to load, so
        the providers the session ended up with are checked, not only the ones asked for."""
        if _CUDA not in ort.get_available_providers():
            self.device_warning = (
                "embedder.device is cuda but this onnxruntime has no CUDA provider (install the gpu extra, "
                "docs/scaling.md); embedding on the CPU"
            )
            return None
        try:
            # CUDA and cuDNN installed as pip packages (`onnxruntime-gpu[cuda,cudnn]`, or torch's)
            # are not on the loader's path; ONNX Runtime >= 1.21 can load them itself.
            preload = getattr(ort, "preload_dlls", None)
            if preload is not None:
                preload()
            session = self._session(threads, [_CUDA, "CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own types (Fail, RuntimeException, ...)
            self.device_warning = f"embedder.device is cuda but CUDA could not start ({exc}); embedding on the CPU"
            return None
        if session.get_providers()[:1] != [_CUDA]:
            self.device_warning = "embedder.device is cuda but CUDA could not start (see the log); embedding on the CPU"
            return None
        self.device, self._budget = "cuda", _GPU_TOKEN_BUDGET
        self.batch_size = max(self.batch_size, _GPU_MIN_ROWS)
        return session

    @staticmethod
    def _session(threads: int, providers: list[str] | None = None, model: str = "model.onnx") -> ort.InferenceSession:
        """A session on `model`, a file of MODEL_DIR (or a path: scripts/embedder/eval_model.py
        measures trained query graphs through it)."""
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        # ONNX Runtime's pool threads spin-wait for work by default. On two cores shared with the
        # editor (and here with the indexer thread, which tokenises and stores between calls) the
        # spinning steals the cores the work needs: measured on this machine under load, turning
        # it off took the same texts from 21 to 35 chunks/s and from 46 to 28 ms CPU per chunk.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(str(MODEL_DIR / model), opts, providers=providers or ["CPUExecutionProvider"])

    def _documents(self) -> ort.InferenceSession:
        if self._docs is None:
            with self._docs_lock:
                if self._docs is None:
                    self._docs = self._session(self._threads)
        return self._docs

    @staticmethod
    def _infer(session: ort.InferenceSession, encs: list[Encoding]) -> np.ndarray:
        hidden, mask = LocalOnnxEmbedder._hidden(session, encs)
        return _pool(hidden, mask)

    @staticmethod
    def _hidden(session: ort.InferenceSession, encs: list[Encoding]) -> tuple[np.ndarray, np.ndarray]:
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, e in enumerate(encs):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        return hidden, mask

    def batches(self, texts: list[str]) -> list[list[int]]:
        """The indices of `texts` grouped as this embedder runs them, one ONNX call per group.
        By similar length (padding to the longest text in a call is wasted work), with each
        call's padded size capped: ONNX Runtime's arena keeps the largest call's buffers for
        the life of the process (peak ~1 GB at 32 x 256 tokens, 323 MB at 8 x 256). The indexer
        embeds a window of chunks group by group, so every call is as full as the window allows."""
        lengths: list[int] = []
        for i in range(0, len(texts), _PLAN_SLICE):  # only a slice's encodings alive at a time
            lengths.extend(len(e.ids) for e in self._tok.encode_batch(texts[i : i + _PLAN_SLICE]))
        return self._plan(lengths)

    def _plan(self, lengths: list[int]) -> list[list[int]]:
        groups: list[list[int]] = []
        group: list[int] = []
        for i in sorted(range(len(lengths)), key=lengths.__getitem__):
            # Sorted by length, so row i is the widest of the group it would join.
            if group and ((len(group) + 1) * lengths[i] > self._budget or len(group) >= self.batch_size):
                groups.append(group)
                group = []
            group.append(i)
        if group:
            groups.append(group)
        return groups

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        encs = self._tok.encode_batch(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for group in self._plan([len(e.ids) for e in encs]):
            out[group] = self._infer(self._documents(), [encs[k] for k in group])
        return out

    def embed_query(self, text: str) -> np.ndarray:
        encs = self._tok.encode_batch([text])
        with self._query_lock:
            return self._infer(self._query_session(len(encs[0].ids)), encs)[0]

    def _query_session(self, tokens: int) -> ort.InferenceSession:
        """Call with the query lock held."""
        if tokens < LONG_QUERY_TOKENS or self._threads < 2:
            return self._queries
        if self._long_queries is None:
            self._long_queries = self._session(2)
        return self._long_queries

    def embed_with_names(self, texts: list[str], names: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Each text's vector and its name vector from the same forward pass: the hidden states
        of the text's first tokens (as many as `names[i]`, the chunk's name line, has after
        [CLS]) mean-pooled (ragls.index.name_rerank). One call: the caller groups the texts
        (`batches`)."""
        if not texts:
            empty = np.zeros((0, self.dimension), dtype=np.float32)
            return empty, empty
        encs = self._tok.encode_batch(texts)
        heads = [min(len(e.ids) - 1, len(t.ids)) for e, t in zip(self._tok.encode_batch(names), encs, strict=True)]
        hidden, mask = self._hidden(self._documents(), encs)
        head_mask = np.zeros_like(mask)
        for i, n in enumerate(heads):
            head_mask[i, : max(n, 1)] = 1
        return _pool(hidden, mask), _pool(hidden, head_mask)

    def close(self) -> None:
        pass


def _pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over the masked tokens, unit length (as sentence-transformers pools MiniLM)."""
    m = mask[..., None].astype(np.float32)
    pooled = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)).astype(np.float32)
