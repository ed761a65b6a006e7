"""Settings: one pydantic schema, merged from defaults < user config file < .ragls.toml
< initializationOptions < workspace/configuration. Every field is documented in
docs/configuration.md.

Trust (docs/security.md): the workspace is untrusted input. Fields marked sensitive (they send
data or credentials off the machine, or choose where data is read and written) are honoured
only from the user's own sources: the user config file, the client's initializationOptions and
workspace/configuration, and environment variables. A workspace `.ragls.toml` that sets one is
ignored for that key, unless the user listed the folder in `trustedFolders`."""

from __future__ import annotations

import logging
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

# The JSON Schema extension key that marks a trust-sensitive setting (see module docstring).
SENSITIVE = "x-ragls-sensitive"
_SENSITIVE = {SENSITIVE: True}
WORKSPACE_FILE = ".ragls.toml"


class _Model(BaseModel):
    # camelCase on the wire, snake_case in Python; unknown keys are ignored so that newer
    # clients can talk to older servers.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class EmbedderSettings(_Model):
    provider: Literal["local", "openai", "ollama", "copilot"] = Field(
        default="local",
        description="Where chunks are embedded; anything but local sends code off the machine",
        json_schema_extra=_SENSITIVE,
    )
    model: str = "all-MiniLM-L6-v2"
    base_url: str | None = Field(default=None, description="HTTP provider endpoint", json_schema_extra=_SENSITIVE)
    api_key_env: str | None = Field(
        default=None, description="Environment variable holding the provider's API key", json_schema_extra=_SENSITIVE
    )
    dimensions: int | None = Field(default=None, ge=1, le=8192)
    # 16 keeps the local model under ~700 MB RSS; 32 peaks near 1.2 GB for little speed.
    batch_size: int = Field(default=16, ge=1, le=512)
    threads: int = Field(default=0, ge=0, le=64, description="ONNX intra-op threads; 0 = all cores")
    max_tokens: int = Field(default=256, ge=16, le=512)
    timeout_s: float = Field(default=60.0, gt=0)
    max_concurrency: int = Field(default=2, ge=1, le=32)
    proxy: str | None = Field(default=None, description="HTTP(S) proxy for providers", json_schema_extra=_SENSITIVE)
    # HTTP providers: retry policy for 429 / 5xx / timeouts, and Copilot sign-in overrides.
    max_retries: int = Field(default=4, ge=0, le=10)
    retry_base_ms: int = Field(default=500, ge=0, le=60_000)
    retry_max_ms: int = Field(default=30_000, ge=0, le=600_000)
    token_file: str | None = Field(
        default=None, description="Copilot apps.json/hosts.json override", json_schema_extra=_SENSITIVE
    )
    auth_url: str | None = Field(
        default=None, description="GitHub API base for the Copilot token exchange", json_schema_extra=_SENSITIVE
    )


class QdrantSettings(_Model):
    url: str | None = Field(
        default=None, description="Qdrant server URL; unset = embedded Qdrant Edge", json_schema_extra=_SENSITIVE
    )
    api_key_env: str | None = Field(
        default="QDRANT_API_KEY",
        description="Environment variable holding the Qdrant API key",
        json_schema_extra=_SENSITIVE,
    )
    path: str | None = Field(
        default=None, description="Embedded store directory override", json_schema_extra=_SENSITIVE
    )
    collection_prefix: str = Field(
        default="ragls", description="Prefix of server collection names", json_schema_extra=_SENSITIVE
    )
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
    cache_dir: str | None = Field(
        default=None, description="Index and embedding cache directory", json_schema_extra=_SENSITIVE
    )
    trusted_folders: list[str] = Field(
        default_factory=list,
        description="Folders whose .ragls.toml may set sensitive settings (only from the user's own settings)",
        json_schema_extra=_SENSITIVE,
    )
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


def sensitive_keys(model: type[BaseModel] | None = None, prefix: str = "") -> list[str]:
    """Dotted camelCase names of every trust-sensitive setting, derived from the schema."""
    model = model or Settings
    out: list[str] = []
    for name, info in model.model_fields.items():
        key = prefix + (info.alias or name)
        extra = info.json_schema_extra
        if isinstance(extra, dict) and extra.get(SENSITIVE):
            out.append(key)
        elif isinstance(info.annotation, type) and issubclass(info.annotation, _Model):
            out.extend(sensitive_keys(info.annotation, key + "."))
    return out


def _strip_sensitive(layer: dict[str, Any], model: type[BaseModel], prefix: str = "") -> list[str]:
    """Remove sensitive fields from a parsed (snake_case, exclude_unset) layer; return their names."""
    removed: list[str] = []
    for name, info in model.model_fields.items():
        if name not in layer:
            continue
        key = prefix + (info.alias or name)
        extra = info.json_schema_extra
        if isinstance(extra, dict) and extra.get(SENSITIVE):
            del layer[name]
            removed.append(key)
        elif isinstance(info.annotation, type) and issubclass(info.annotation, _Model):
            if isinstance(layer[name], dict):
                removed.extend(_strip_sensitive(layer[name], info.annotation, key + "."))
    return removed


def user_config_path() -> Path:
    """The user's own config file: $RAGLS_CONFIG, else $XDG_CONFIG_HOME/ragls/config.toml."""
    if env := os.environ.get("RAGLS_CONFIG"):
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ragls" / "config.toml"


def _read_toml(path: Path, source: str) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SettingsError(f"cannot read {source}: {exc}") from exc


def _parse(name: str, layer: Any) -> dict[str, Any]:
    if not isinstance(layer, dict):
        return {}
    try:
        # Validating maps camelCase aliases to field names; exclude_unset keeps the
        # layer partial so it only overrides what it names.
        return Settings.model_validate(layer).model_dump(exclude_unset=True)
    except ValidationError as exc:
        raise SettingsError(describe_validation_error(exc, name)) from exc


def folder_trusted(root: Path, trusted_folders: list[str]) -> bool:
    real = root.resolve()
    for entry in trusted_folders:
        base = Path(entry).expanduser().resolve()
        if real == base or base in real.parents:
            return True
    return False


@dataclass
class ResolvedSettings:
    settings: Settings
    # Sensitive keys the workspace file set and that were ignored, and the user-facing warnings.
    ignored_keys: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


_warned: set[tuple[str, tuple[str, ...]]] = set()


def resolve_settings(root: Path | None, *layers: tuple[str, Any]) -> ResolvedSettings:
    """Merge defaults < user config file < workspace .ragls.toml < client layers (name, dict),
    dropping the workspace file's sensitive keys unless the user trusts the folder."""
    user_path = user_config_path()
    user = _parse(str(user_path), _read_toml(user_path, str(user_path)))
    trusted_layers = [user] + [_parse(name, layer) for name, layer in layers]
    workspace: dict[str, Any] = {}
    ignored: list[str] = []
    if root is not None:
        workspace = _parse(WORKSPACE_FILE, _read_toml(root / WORKSPACE_FILE, WORKSPACE_FILE))
        trusted: list[str] = []
        for layer in trusted_layers:
            trusted.extend(layer.get("trusted_folders") or [])
        if folder_trusted(root, trusted):
            workspace.pop("trusted_folders", None)  # trust is the user's to give, never the folder's
        else:
            ignored = _strip_sensitive(workspace, Settings)
    merged: dict[str, Any] = {}
    for layer in [user, workspace, *trusted_layers[1:]]:
        merged = _deep_merge(merged, layer)
    warnings: list[str] = []
    if ignored and root is not None:
        msg = (
            f"{WORKSPACE_FILE} in {root} sets {', '.join(ignored)}, which only your own settings may set "
            "(they send data off this machine or choose where it is stored); ignored, using the safe values. "
            f'To allow them, add "{root}" to trustedFolders in {user_path}, or set them in your editor\'s '
            "user settings."
        )
        warnings.append(msg)
        if (str(root), tuple(ignored)) not in _warned:
            _warned.add((str(root), tuple(ignored)))
            logging.getLogger("ragls.config").warning("%s", msg)
    return ResolvedSettings(Settings.model_validate(merged), ignored, warnings)


def load_settings(root: Path | None, *layers: tuple[str, Any]) -> Settings:
    """The merged settings (see resolve_settings for the layers and the trust rule)."""
    return resolve_settings(root, *layers).settings


def settings_schema() -> dict[str, Any]:
    """The JSON Schema of the settings (camelCase names, descriptions, defaults, sensitivity)."""
    return Settings.model_json_schema(by_alias=True)


def cache_root(settings: Settings) -> Path:
    if settings.cache_dir:
        return Path(settings.cache_dir).expanduser()
    if env := os.environ.get("RAGLS_CACHE_DIR"):
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragls"
