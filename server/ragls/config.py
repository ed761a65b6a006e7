"""Settings: one pydantic schema, merged from defaults < user config file < .ragls.toml
< initializationOptions < workspace/configuration. Every field is documented in
docs/configuration.md.

Trust (docs/security.md): the workspace is untrusted input. Fields marked sensitive (they send
data or credentials off the machine, or choose where data is read and written) are honoured
only from the user's own sources: the user config file, the client's initializationOptions and
workspace/configuration, and environment variables. A workspace `.ragls.toml` that sets one is
ignored for that key, unless the user listed the folder in `trustedFolders`."""

from __future__ import annotations

import copy
import logging
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from ragls.system.untrusted_files import NotRegularFile, read_bounded

# The JSON Schema extension key that marks a trust-sensitive setting (see module docstring).
SENSITIVE = "x-ragls-sensitive"
_SENSITIVE = {SENSITIVE: True}
WORKSPACE_FILE = ".ragls.toml"


class _Model(BaseModel):
    # camelCase on the wire, snake_case in Python; unknown keys are ignored so that newer
    # clients can talk to older servers.
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", use_attribute_docstrings=True
    )


class EmbedderSettings(_Model):
    provider: Literal["local", "openai", "ollama", "copilot"] = Field(
        default="local",
        json_schema_extra=_SENSITIVE,
    )
    """where chunks are embedded: `local` (bundled ONNX model, offline), `openai` (any OpenAI-compatible `/v1/embeddings`), `ollama`, `copilot`"""
    model: str = "all-MiniLM-L6-v2"
    """model name sent to HTTP providers (the local provider has one model)"""
    base_url: str | None = Field(default=None, json_schema_extra=_SENSITIVE)
    """HTTP provider endpoint, e.g. `http://localhost:11434` (Ollama), `https://api.openai.com`"""
    api_key_env: str | None = Field(default=None, json_schema_extra=_SENSITIVE)
    """name of the environment variable holding the provider's API key"""
    dimensions: int | None = Field(default=None, ge=1, le=8192)
    """vector size; for HTTP providers, requested from the API and used for the collection; probed when unset"""
    # The bundled model also splits a call so that rows x padded tokens stay <= 2,048, which bounds
    # ONNX Runtime's arena; larger batches buy little speed.
    batch_size: int = Field(default=16, ge=1, le=512)
    """texts per embedding call; the bundled model also caps each ONNX call at 512 padded tokens, which bounds its memory"""
    device: Literal["cpu", "cuda"] = Field(default="cpu", json_schema_extra=_SENSITIVE)
    """where the bundled model embeds chunks: `cpu`, or `cuda` (an NVIDIA GPU; needs the `gpu` extra, onnxruntime-gpu, docs/scaling.md); falls back to the CPU with a warning when CUDA cannot start. Queries stay on the CPU"""
    threads: int = Field(default=0, ge=0, le=64)
    """ONNX intra-op threads for indexing (0 = all cores); queries use their own, one thread (two for a long one)"""
    max_tokens: int = Field(default=256, ge=16, le=512)
    """truncation length of a chunk for the local model; another value is another model identity (its own index and cache rows: the workspace is embedded again)"""
    timeout_s: float = Field(default=60.0, gt=0)
    """HTTP provider request timeout, seconds"""
    max_concurrency: int = Field(default=2, ge=1, le=32)
    """concurrent requests per HTTP provider"""
    proxy: str | None = Field(default=None, json_schema_extra=_SENSITIVE)
    """HTTP(S) proxy URL for providers (Copilot included)"""
    # HTTP providers: retry policy for 429 / 5xx / timeouts, and Copilot sign-in overrides.
    max_retries: int = Field(default=4, ge=0, le=10)
    """retries on 429, 5xx and timeouts"""
    retry_base_ms: int = Field(default=500, ge=0, le=60_000)
    """first backoff delay; doubles per retry (429 `Retry-After` wins)"""
    retry_max_ms: int = Field(default=30_000, ge=0, le=600_000)
    """backoff cap"""
    token_file: str | None = Field(default=None, json_schema_extra=_SENSITIVE)
    """Copilot: path of `apps.json` / `hosts.json` (default `~/.config/github-copilot/`)"""
    auth_url: str | None = Field(default=None, json_schema_extra=_SENSITIVE)
    """Copilot: GitHub API base for the token exchange (tests, GitHub Enterprise)"""
    snapshot: str | None = Field(default=None, json_schema_extra=_SENSITIVE)
    """an index snapshot (`ragls snapshot export`: a file path or an http(s) URL) whose vectors are taken on start instead of embedding again (docs/scaling.md)"""


class QdrantSettings(_Model):
    url: str | None = Field(default=None, json_schema_extra=_SENSITIVE)
    """Qdrant server or cluster URL; unset = embedded Qdrant Edge. `":memory:"` = in-process qdrant-client (tests)"""
    api_key_env: str | None = Field(
        default="QDRANT_API_KEY",
        json_schema_extra=_SENSITIVE,
    )
    """environment variable holding the Qdrant API key"""
    path: str | None = Field(default=None, json_schema_extra=_SENSITIVE)
    """directory for the embedded indexes (default `<cache>/index`)"""
    collection_prefix: str = Field(default="ragls", json_schema_extra=_SENSITIVE)
    """server collection names: `<prefix>-<workspace id>-<model>-<dim>`"""
    prefer_grpc: bool = True
    """use gRPC to the server when it offers it"""
    shard_number: int | None = Field(default=None, ge=1)
    """shards of a new server collection (cluster)"""
    replication_factor: int | None = Field(default=None, ge=1)
    """replicas of a new server collection (cluster)"""
    timeout_s: float = Field(default=30.0, gt=0)
    """server request timeout, seconds"""
    batch_size: int = Field(default=256, ge=1, le=10_000)
    """points per upsert request to the server"""
    quantization: Literal["none", "scalar"] = "none"
    """`scalar` = int8 scalar quantisation of dense vectors on the server"""
    on_disk: bool = Field(default=False)
    """keep original vectors on disk (mmap) on the server"""


class RetrievalSettings(_Model):
    mode: Literal["hybrid", "dense", "lexical"] = "hybrid"
    """`hybrid` (dense + lexical, fused), `dense`, `lexical`"""
    top_k: int = Field(default=20, ge=1, le=100)
    """default number of chunks when a request gives no `topK` (`maxChars` decides how many reach the context)"""
    max_chars: int = Field(default=4000, ge=0, le=200_000)
    """default context budget when a request gives no `maxChars`"""
    max_per_file: int = Field(default=5, ge=1, le=100)
    """at most this many (merged) chunks from one file"""
    fusion: Literal["rrf", "dbsf"] = "rrf"
    """`rrf` (Reciprocal Rank Fusion, weighted) or `dbsf` (distribution-based score fusion)"""
    dense_weight: float = Field(default=1.0, ge=0)
    """RRF weight of the dense prefetch"""
    lexical_weight: float = Field(default=1.0, ge=0)
    """RRF weight of the lexical prefetch (x0.2 for a query that names no code: dense ranks prose better)"""
    symbol_boost: bool = True
    """a query naming an existing definition ranks it first"""
    rerank: Literal["none", "lexical"] = "none"
    """`lexical`: re-score candidates by query-term overlap (see docs/evaluation.md)"""
    candidates: int = Field(default=50, ge=5, le=1000)
    """candidates per prefetch before fusion"""
    git_history_commits: int = Field(default=1000, ge=0, le=100_000)
    """rank higher, for a described change, the files whose recent commit messages match it, and for a bug report the files its commits changed together with the first ones found: how many of the workspace's newest git commits are read (0: off)"""


class IndexingSettings(_Model):
    auto_index: bool = True
    """index on start; `false` waits for `rag/reindex`"""
    watch: bool = True
    """watch the workspace for changes (watchfiles; falls back to polling)"""
    debounce_ms: int = Field(default=200, ge=0, le=60_000)
    """quiet time before a burst of file changes is indexed as one batch"""
    open_buffer_debounce_ms: int = Field(default=300, ge=0, le=60_000)
    """quiet time before an edited, unsaved buffer is re-indexed"""
    nice: int = Field(default=5, ge=0, le=19)
    """niceness added to the indexing thread (Linux) so the editor stays responsive"""
    max_chunk_chars: int = Field(default=2400, ge=200, le=50_000)
    """larger definitions are split by lines (each piece keeps the signature)"""
    min_chunk_chars: int = Field(default=10_000, ge=0, le=10_000)
    """top-level import-only groups smaller than this are dropped (the default drops them all: measured in docs/evaluation.md)"""
    small_class_chars: int = Field(default=600, ge=0, le=50_000)
    """a class up to this size stays one chunk; larger ones become header + methods"""
    window_lines: int = Field(default=40, ge=5, le=1000)
    """line window for plain text and oversize pieces"""
    window_overlap: int = Field(default=10, ge=0, le=500)
    """overlap of text windows (at most half of `windowLines`)"""


class FeedbackSettings(_Model):
    # Sensitive: whether ratings are written (and where they are read from) is the user's choice,
    # never a repository's (docs/feedback.md).
    enabled: bool = Field(default=True, json_schema_extra=_SENSITIVE)
    """keep the ratings of answers (`rag/feedback`, the MCP `feedback` tool) in a private file per folder under `$XDG_STATE_HOME/ragls/feedback` (docs/feedback.md); `false` stores nothing and answers carry no `resultId`"""
    # Sensitive: a model file from the user's state folder changes every answer; only the user
    # opts in, a repository's `.ragls.toml` cannot (docs/feedback.md).
    tuned_ranker: bool = Field(default=False, json_schema_extra=_SENSITIVE)
    """rank a folder's answers by the model `ragls feedback --tune` fitted on your own ratings of it, when one exists (docs/feedback.md); `false`: the default ranking"""


class Settings(_Model):
    include: list[str] = Field(default_factory=list, max_length=1000)
    """gitignore-style globs; when non-empty, only matching files are indexed"""
    exclude: list[str] = Field(default_factory=list, max_length=1000)
    """extra gitignore-style excludes, on top of `.gitignore`, `.ragignore` and the built-in defaults"""
    max_file_bytes: int = Field(default=1_000_000, ge=1, le=50_000_000)
    """files (and open editor buffers) larger than this are skipped (`too_large`); a workspace's `.ragls.toml` may raise it to 4 MB at most"""
    cache_dir: str | None = Field(default=None, json_schema_extra=_SENSITIVE)
    """root for indexes and the embedding cache (default `$XDG_CACHE_HOME/ragls`)"""
    trusted_folders: list[str] = Field(
        default_factory=list,
        json_schema_extra=_SENSITIVE,
    )
    """folders whose `.ragls.toml` may set sensitive keys; from the user's own settings only"""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """`debug`, `info`, `warning`, `error` (stderr; file contents only at `debug`)"""
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    qdrant: QdrantSettings = Field(default_factory=QdrantSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    indexing: IndexingSettings = Field(default_factory=IndexingSettings)
    feedback: FeedbackSettings = Field(default_factory=FeedbackSettings)


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


# A settings file is a few KB; a bigger one is read no further than this (and does not parse).
_MAX_SETTINGS_FILE_BYTES = 1 << 20


def _read_toml(path: Path, source: str, inside: Path | str) -> dict[str, Any]:
    """A settings file, opened as untrusted_files does: only a regular file, bounded, and a link
    only when it resolves into `inside` (the workspace for `.ragls.toml`; "/" for the user's own
    file, often a link into their dotfiles). Missing, a FIFO, a device: no settings."""
    try:
        data = read_bounded(path, _MAX_SETTINGS_FILE_BYTES, inside)
    except (FileNotFoundError, NotADirectoryError, NotRegularFile):
        return {}
    except OSError as exc:
        raise SettingsError(f"cannot read {source}: {exc.strerror or exc}") from exc
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
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


_BOUNDS = {"greater_than_equal": "ge", "less_than_equal": "le", "too_long": "max_length"}


def _parse_untrusted(name: str, layer: Any) -> tuple[dict[str, Any], list[str]]:
    """A workspace layer is the repository's, not the user's: a value out of range is clamped
    to the bound and a value that does not validate is dropped, each with a warning, so that a
    typo (or a hostile value) costs one setting, never the folder's index."""
    if not isinstance(layer, dict):
        return {}, []
    data = copy.deepcopy(layer)
    warnings: list[str] = []
    for _ in range(100):  # each round fixes at least one error; the schema has fewer fields
        try:
            return Settings.model_validate(data).model_dump(exclude_unset=True), warnings
        except ValidationError as exc:
            for e in exc.errors():
                _repair(data, e, name, warnings)
    return {}, [*warnings, f"{name}: too many invalid settings; all ignored"]


def _repair(data: dict[str, Any], err: Any, source: str, warnings: list[str]) -> None:
    loc = [p for p in err["loc"] if isinstance(p, str)]
    # A list element's error (`include.3`) is the list's: its key is the last string.
    parent: Any = data
    for key in loc[:-1]:
        parent = parent.get(key) if isinstance(parent, dict) else None
    if not loc or not isinstance(parent, dict) or loc[-1] not in parent:
        return
    key, dotted = loc[-1], ".".join(loc)
    bound = _BOUNDS.get(err["type"])
    limit = (err.get("ctx") or {}).get(bound) if bound else None
    if bound == "max_length" and isinstance(parent[key], list) and isinstance(limit, int):
        parent[key] = parent[key][:limit]
        warnings.append(f"{source}: {dotted} has more than {limit} entries; only the first {limit} are used")
    elif bound in ("ge", "le") and isinstance(limit, int | float) and isinstance(parent[key], int | float):
        warnings.append(
            f"{source}: {dotted} = {parent[key]!r} is {'below the minimum' if bound == 'ge' else 'above the maximum'} "
            f"{limit}; using {limit}"
        )
        parent[key] = limit
    else:
        warnings.append(f"{source}: {dotted}: {err['msg']}; ignored, using the default")
        del parent[key]


def _bound_together(s: Settings) -> list[str]:
    """Bounds between settings, which no single field's range can state: a window overlap of
    more than half the window would make every window step by a few lines."""
    ix = s.indexing
    if ix.window_overlap > ix.window_lines // 2:
        msg = (
            f"indexing.windowOverlap = {ix.window_overlap} is more than half of indexing.windowLines "
            f"({ix.window_lines}); using {ix.window_lines // 2}"
        )
        ix.window_overlap = ix.window_lines // 2
        return [msg]
    return []


# The largest file a workspace's own settings may have indexed. A file is read, decoded and
# scanned whole in one go, so its size is what one step holds the memory and a core for: a
# repository asking for 50 MB files made one status answer wait 3.3 s and a worker take 3 GB.
# The user's own settings may go to the schema's maximum.
WORKSPACE_MAX_FILE_BYTES = 4_000_000


def _workspace_bounds(layer: dict[str, Any]) -> list[str]:
    """Bounds that only the workspace's layer has (it is the repository's, not the user's)."""
    if layer.get("max_file_bytes", 0) > WORKSPACE_MAX_FILE_BYTES:
        msg = (
            f"{WORKSPACE_FILE}: maxFileBytes = {layer['max_file_bytes']} is above what a workspace may set "
            f"({WORKSPACE_MAX_FILE_BYTES}); using {WORKSPACE_MAX_FILE_BYTES} (your own settings may set more)"
        )
        layer["max_file_bytes"] = WORKSPACE_MAX_FILE_BYTES
        return [msg]
    return []


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
    user = _parse(str(user_path), _read_toml(user_path, str(user_path), "/"))
    trusted_layers = [user] + [_parse(name, layer) for name, layer in layers]
    workspace: dict[str, Any] = {}
    ignored: list[str] = []
    repaired: list[str] = []
    if root is not None:
        try:
            raw = _read_toml(root / WORKSPACE_FILE, WORKSPACE_FILE, root)
        except SettingsError as exc:  # a file that does not parse sets nothing
            raw, repaired = {}, [f"{exc}; ignored"]
        else:
            workspace, repaired = _parse_untrusted(WORKSPACE_FILE, raw)
            repaired += _workspace_bounds(workspace)
        if not raw:
            workspace = {}
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
    settings = Settings.model_validate(merged)
    fixed = repaired + _bound_together(settings)
    for msg in fixed:
        if (str(root), (msg,)) not in _warned:  # once per process, not on every reload
            _warned.add((str(root), (msg,)))
            logging.getLogger("ragls.config").warning("%s", msg)
    warnings += fixed
    return ResolvedSettings(settings, ignored, warnings)


def load_settings(root: Path | None, *layers: tuple[str, Any]) -> Settings:
    """The merged settings (see resolve_settings for the layers and the trust rule)."""
    return resolve_settings(root, *layers).settings


def settings_schema() -> dict[str, Any]:
    """The JSON Schema of the settings (camelCase names, descriptions, defaults, sensitivity):
    the single source of every client's settings (`ragls schema`)."""
    schema = Settings.model_json_schema(by_alias=True)
    defaults = Settings().model_dump(mode="json", by_alias=True)
    for name, sub in schema["properties"].items():
        if "$ref" in sub:
            props = schema["$defs"][sub["$ref"].rsplit("/", 1)[1]]["properties"]
            for key, prop in props.items():
                prop.setdefault("default", defaults[name][key])
        else:
            sub.setdefault("default", defaults[name])  # list fields built by default_factory
    return schema


def flat_schema() -> dict[str, dict[str, Any]]:
    """Every setting by its dotted camelCase key (`retrieval.topK`) with its JSON Schema
    (type or anyOf, default, description, bounds, enum, x-ragls-sensitive), in declaration
    order: what clients generate their settings from (`ragls schema --flat`)."""
    schema = settings_schema()
    out: dict[str, dict[str, Any]] = {}
    for name, sub in schema["properties"].items():
        if "$ref" in sub:
            for key, prop in schema["$defs"][sub["$ref"].rsplit("/", 1)[1]]["properties"].items():
                out[f"{name}.{key}"] = {k: v for k, v in prop.items() if k != "title"}
        else:
            out[name] = {k: v for k, v in sub.items() if k != "title"}
    return out


def cache_root(settings: Settings) -> Path:
    if settings.cache_dir:
        return Path(settings.cache_dir).expanduser()
    if env := os.environ.get("RAGLS_CACHE_DIR"):
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragls"
