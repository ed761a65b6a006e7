"""Settings: one pydantic schema, merged from defaults < .ragls.toml < initializationOptions
< workspace/configuration. Every field is documented in docs/configuration.md."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel


class _Model(BaseModel):
    # camelCase on the wire, snake_case in Python; unknown keys are ignored so that newer
    # clients can talk to older servers.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class EmbedderSettings(_Model):
    provider: Literal["local", "openai", "ollama", "copilot"] = "local"
    model: str = "all-MiniLM-L6-v2"
    base_url: str | None = None
    api_key_env: str | None = None
    dimensions: int | None = Field(default=None, ge=1, le=8192)
    # 16 keeps the local model under ~700 MB RSS; 32 peaks near 1.2 GB for little speed.
    batch_size: int = Field(default=16, ge=1, le=512)
    threads: int = Field(default=0, ge=0, le=64, description="ONNX intra-op threads; 0 = all cores")
    max_tokens: int = Field(default=256, ge=16, le=512)
    timeout_s: float = Field(default=60.0, gt=0)
    max_concurrency: int = Field(default=2, ge=1, le=32)
    proxy: str | None = None
    # HTTP providers: retry policy for 429 / 5xx / timeouts, and Copilot sign-in overrides.
    max_retries: int = Field(default=4, ge=0, le=10)
    retry_base_ms: int = Field(default=500, ge=0, le=60_000)
    retry_max_ms: int = Field(default=30_000, ge=0, le=600_000)
    token_file: str | None = Field(default=None, description="Copilot apps.json/hosts.json override")
    auth_url: str | None = Field(default=None, description="GitHub API base for the Copilot token exchange")


class QdrantSettings(_Model):
    url: str | None = None
    api_key_env: str | None = "QDRANT_API_KEY"
    path: str | None = Field(default=None, description="Embedded store directory override")
    collection_prefix: str = "ragls"
    prefer_grpc: bool = True
    shard_number: int | None = Field(default=None, ge=1)
    replication_factor: int | None = Field(default=None, ge=1)
    timeout_s: float = Field(default=30.0, gt=0)
    batch_size: int = Field(default=256, ge=1, le=10_000, description="Points per upsert request")
    quantization: Literal["none", "scalar"] = "none"
    on_disk: bool = Field(default=False, description="Keep original vectors on disk (mmap) on the server")


class RetrievalSettings(_Model):
    mode: Literal["hybrid", "dense", "lexical"] = "hybrid"
    top_k: int = Field(default=5, ge=1, le=100)
    max_chars: int = Field(default=4000, ge=0, le=200_000)
    max_per_file: int = Field(default=5, ge=1, le=100)
    fusion: Literal["rrf", "dbsf"] = "rrf"
    dense_weight: float = Field(default=1.0, ge=0)
    lexical_weight: float = Field(default=1.0, ge=0)
    symbol_boost: bool = True
    rerank: Literal["none", "lexical"] = "none"
    candidates: int = Field(default=50, ge=5, le=1000)


class IndexingSettings(_Model):
    auto_index: bool = True
    watch: bool = True
    debounce_ms: int = Field(default=200, ge=0, le=60_000)
    open_buffer_debounce_ms: int = Field(default=300, ge=0, le=60_000)
    nice: int = Field(default=5, ge=0, le=19, description="Niceness added to the indexing thread")
    max_chunk_chars: int = Field(default=2400, ge=200, le=50_000)
    min_chunk_chars: int = Field(default=10_000, ge=0, le=10_000)
    small_class_chars: int = Field(default=600, ge=0, le=50_000)
    window_lines: int = Field(default=40, ge=5, le=1000)
    window_overlap: int = Field(default=10, ge=0, le=500)


class Settings(_Model):
    include: list[str] = Field(default_factory=list, description="Globs; when set, only matching files")
    exclude: list[str] = Field(default_factory=list, description="Extra gitignore-style excludes")
    max_file_bytes: int = Field(default=1_000_000, ge=1)
    cache_dir: str | None = None
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    qdrant: QdrantSettings = Field(default_factory=QdrantSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    indexing: IndexingSettings = Field(default_factory=IndexingSettings)


class SettingsError(ValueError):
    """Raised with a message that names the offending setting."""


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        elif v is not None:
            out[k] = v
    return out


def describe_validation_error(err: ValidationError, source: str) -> str:
    parts = []
    for e in err.errors()[:5]:
        loc = ".".join(str(p) for p in e["loc"]) or "(root)"
        parts.append(f"{loc}: {e['msg']}")
    return f"invalid settings in {source}: " + "; ".join(parts)


def load_settings(root: Path | None, *layers: tuple[str, Any]) -> Settings:
    """Merge layers (name, dict) over defaults and the workspace's .ragls.toml."""
    merged: dict[str, Any] = {}
    sources: list[tuple[str, Any]] = []
    if root is not None and (root / ".ragls.toml").is_file():
        try:
            sources.append((".ragls.toml", tomllib.loads((root / ".ragls.toml").read_text("utf-8"))))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise SettingsError(f"cannot read .ragls.toml: {exc}") from exc
    sources.extend(layers)
    for name, layer in sources:
        if not isinstance(layer, dict):
            continue
        try:
            # Validating maps camelCase aliases to field names; exclude_unset keeps the
            # layer partial so it only overrides what it names.
            parsed = Settings.model_validate(layer).model_dump(exclude_unset=True)
        except ValidationError as exc:
            raise SettingsError(describe_validation_error(exc, name)) from exc
        merged = _deep_merge(merged, parsed)
    return Settings.model_validate(merged)


def cache_root(settings: Settings) -> Path:
    if settings.cache_dir:
        return Path(settings.cache_dir).expanduser()
    if env := os.environ.get("RAGLS_CACHE_DIR"):
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragls"
