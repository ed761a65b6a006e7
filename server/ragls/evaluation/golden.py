"""Golden sets for `ragls eval`: a natural-language query per item and where its answer lives.

File format (JSON, or the same shape in TOML with ``[[queries]]`` tables)::

    {"name": "attrs-23.2.0", "language": "python", "root": "src",
     "queries": [{"id": "attrs-0001", "query": "Return a tuple of attribute names",
                  "files": ["attr/_make.py"], "symbols": ["fields_dict"],
                  "lines": [[120, 141]]}]}

``files``, ``symbols`` and ``lines`` are parallel lists: answer ``i`` is the function
``symbols[i]`` in ``files[i]`` at ``lines[i]`` (1-based, inclusive). A query may have several
answers when the same text documents several functions; a hit on any of them counts.
``root`` is relative to the folder holding the golden file; ``files`` are relative to root.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

__all__ = ["GoldenQuery", "GoldenSet", "GoldenSetError", "dump_golden", "load_golden"]


class GoldenSetError(ValueError):
    """A golden file that cannot be read or does not match the schema."""


class GoldenQuery(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    query: str = Field(min_length=1)
    files: list[str] = Field(min_length=1)
    symbols: list[str] | None = None
    lines: list[tuple[int, int]] | None = None

    @field_validator("query")
    @classmethod
    def _query_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query is blank")
        return value

    @field_validator("files")
    @classmethod
    def _files_relative_posix(cls, value: list[str]) -> list[str]:
        # Paths are compared as strings with the hits' root-relative paths, so they must be
        # written one canonical way.
        for path in value:
            posix = PurePosixPath(path)
            if not path or "\\" in path or posix.is_absolute() or ".." in posix.parts:
                raise ValueError(f"{path!r} is not a relative POSIX path inside root")
            if str(posix) != path:
                raise ValueError(f"{path!r} is not normalised (expected {str(posix)!r})")
        return value

    @field_validator("lines")
    @classmethod
    def _ranges_valid(cls, value: list[tuple[int, int]] | None) -> list[tuple[int, int]] | None:
        for start, end in value or []:
            if start < 1 or end < start:
                raise ValueError(f"bad line range [{start}, {end}]: need 1 <= start <= end")
        return value

    @model_validator(mode="after")
    def _parallel_lists(self) -> GoldenQuery:
        for name in ("symbols", "lines"):
            other = getattr(self, name)
            if other is not None and len(other) != len(self.files):
                raise ValueError(
                    f"{name} has {len(other)} entries but files has {len(self.files)}; they are parallel lists"
                )
        return self

    def answers(self) -> list[tuple[str, tuple[int, int] | None]]:
        """(file, line range or None) per answer."""
        if self.lines is None:
            return [(path, None) for path in self.files]
        return list(zip(self.files, self.lines, strict=True))


class GoldenSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    language: str | None = None
    root: str = "."
    queries: list[GoldenQuery] = Field(min_length=1)

    # Where the set was loaded from, so that `root` can be resolved; not part of the file.
    _source: Path | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _unique_ids(self) -> GoldenSet:
        seen: set[str] = set()
        for query in self.queries:
            if query.id in seen:
                raise ValueError(f"duplicate query id {query.id!r}")
            seen.add(query.id)
        return self

    @property
    def source(self) -> Path | None:
        return self._source

    def root_dir(self, base: Path | None = None) -> Path:
        """The folder the answers' paths are relative to.

        `base` defaults to the folder of the file the set was loaded from."""
        if base is None:
            if self._source is None:
                raise GoldenSetError(f"golden set {self.name!r} has no source file; pass base")
            base = self._source.parent
        return (base / self.root).resolve()


def _format_location(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _describe(path: Path, err: ValidationError) -> str:
    lines = [f"{path}: invalid golden set ({err.error_count()} error(s))"]
    for item in err.errors():
        lines.append(f"  {_format_location(tuple(item['loc']))}: {item['msg']}")
    return "\n".join(lines)


def _read_raw(path: Path) -> Any:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GoldenSetError(f"{path}: cannot read golden set: {exc.strerror or exc}") from exc
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            return tomllib.loads(data.decode("utf-8"))
        if suffix == ".json":
            return json.loads(data)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        kind = "TOML" if suffix == ".toml" else "JSON"
        raise GoldenSetError(f"{path}: not valid {kind}: {exc}") from exc
    raise GoldenSetError(f"{path}: unknown golden set format {suffix!r}; use .json or .toml")


def load_golden(path: str | Path) -> GoldenSet:
    """Read a golden set from a .json or .toml file; GoldenSetError names file and field."""
    path = Path(path)
    raw = _read_raw(path)
    if not isinstance(raw, dict):
        raise GoldenSetError(f"{path}: invalid golden set: top level must be an object/table")
    try:
        golden = GoldenSet.model_validate(raw)
    except ValidationError as exc:
        raise GoldenSetError(_describe(path, exc)) from exc
    golden._source = path.resolve()
    return golden


def dump_golden(golden: GoldenSet, path: str | Path) -> None:
    """Write a golden set as JSON, one query per line so that diffs stay readable."""
    head = golden.model_dump(mode="json", exclude={"queries"})
    rows = [json.dumps(q.model_dump(mode="json", exclude_none=True), ensure_ascii=False) for q in golden.queries]
    body = json.dumps(head, ensure_ascii=False)[:-1]
    text = body + ', "queries": [\n  ' + ",\n  ".join(rows) + "\n]}\n"
    Path(path).write_text(text, encoding="utf-8")
