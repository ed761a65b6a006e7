"""Pinned sources (eval/sources.toml): fetch through the registries' own clients or URLs,
verify sha256, extract.

Downloads are cached by file name under the output folder and re-verified on every run, so a
corrupted or swapped file is caught before anything is built from it.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tarfile
import tempfile
import tomllib
import urllib.request
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

Language = Literal[
    "python", "javascript", "typescript", "tsx", "go", "rust", "java", "kotlin", "csharp", "c", "cpp", "ruby", "php"
]

# Source files each language's projects index when `include` is not given.
DEFAULT_INCLUDE: dict[str, list[str]] = {
    "python": ["**/*.py"],
    "javascript": ["**/*.js", "**/*.mjs", "**/*.cjs", "**/*.jsx"],
    "typescript": ["**/*.ts"],
    "tsx": ["**/*.tsx", "**/*.ts"],
    "go": ["**/*.go"],
    "rust": ["**/*.rs"],
    "java": ["**/*.java"],
    "kotlin": ["**/*.kt"],
    "csharp": ["**/*.cs"],
    "c": ["**/*.c", "**/*.h"],
    "cpp": ["**/*.cpp", "**/*.cc", "**/*.cxx", "**/*.h", "**/*.hpp", "**/*.hh", "**/*.hxx", "**/*.inl", "**/*.ipp"],
    "ruby": ["**/*.rb"],
    "php": ["**/*.php"],
}

# Projects nobody may evaluate or train on (a copy of the team's list; its header says how
# names are hashed). Kept next to sources.toml so the check needs nothing outside the repo.
BLOCKLIST = Path(__file__).resolve().parents[1] / "training-blocklist.txt"


class Source(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    version: str
    language: Language
    split: Literal["dev", "held-out", "sealed"] = Field(
        description="dev: tuned on; held-out: confirmation only; sealed: scored only at the start and the end of an issue"
    )
    registry: Literal["pypi", "npm", "debian"]
    package: str
    filename: str = Field(description="the downloaded file's name, also its cache key")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    url: str | None = Field(default=None, description="pypi: the file's address on PyPI")
    subdir: str = Field(description="folder inside the extracted archive that is indexed")
    include: list[str] | None = None
    exclude: list[str] = Field(default_factory=list)
    max_queries: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _pypi_needs_url(self) -> Source:
        if self.registry == "pypi" and not self.url:
            raise ValueError("pypi sources need `url` (the sdist's address on PyPI)")
        return self

    @property
    def label(self) -> str:
        return f"{self.name}-{self.version}"

    def include_globs(self) -> list[str]:
        return self.include if self.include is not None else DEFAULT_INCLUDE[self.language]


class SourcesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int = 20240101
    max_queries: int = Field(default=150, ge=1)
    project: list[Source] = Field(min_length=1)


def blocklist_key(name: str) -> str:
    """The list's hash of a name: lowercased, non-alphanumerics removed, sha256, 16 hex digits."""
    normalised = re.sub(r"[^a-z0-9]", "", name.lower())
    return hashlib.sha256(normalised.encode()).hexdigest()[:16]


def load_blocklist(path: Path = BLOCKLIST) -> frozenset[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def blocked_names(source: Source, blocklist: frozenset[str]) -> list[str]:
    """The project's names (its own, its registry package's) that the blocklist holds."""
    return [n for n in dict.fromkeys((source.name, source.package)) if blocklist_key(n) in blocklist]


def check_blocklist(config: SourcesFile, blocklist: frozenset[str]) -> None:
    offenders = [
        f"{s.name} ({', '.join(blocked_names(s, blocklist))})" for s in config.project if blocked_names(s, blocklist)
    ]
    if offenders:
        raise SystemExit(f"refusing blocklisted project(s), never to be used for evaluation: {'; '.join(offenders)}")


def load_sources(path: Path, blocklist: Path = BLOCKLIST) -> SourcesFile:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        config = SourcesFile.model_validate(raw)
        check_blocklist(config, load_blocklist(blocklist))
        return config
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SystemExit(f"{path}: cannot read sources: {exc}") from exc
    except ValidationError as exc:
        details = "\n".join(f"  {'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors())
        raise SystemExit(f"{path}: invalid sources file\n{details}") from exc


def sha256_of(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _run(cmd: list[str], cwd: Path) -> None:
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({result.returncode}): {result.stderr[-2000:]}")


def _download(source: Source, workdir: Path) -> Path:
    """Fetch the pinned file into workdir with the registry's ordinary client."""
    if source.registry == "pypi":
        assert source.url is not None
        target = workdir / source.filename
        request = urllib.request.Request(source.url, headers={"User-Agent": "ragls-eval"})
        with urllib.request.urlopen(request, timeout=300) as response, target.open("wb") as out:
            shutil.copyfileobj(response, out)
    elif source.registry == "npm":
        _run(["npm", "pack", f"{source.package}@{source.version}", "--pack-destination", "."], workdir)
    else:
        _run(["apt-get", "download", f"{source.package}={source.version}"], workdir)
    target = workdir / source.filename
    if not target.is_file():
        found = ", ".join(p.name for p in workdir.iterdir()) or "nothing"
        raise RuntimeError(f"{source.label}: expected {source.filename}, got {found}")
    return target


def fetch(source: Source, cache: Path) -> Path:
    """Return the verified download for `source`, downloading it once."""
    cache.mkdir(parents=True, exist_ok=True)
    cached = cache / source.filename
    if not cached.is_file():
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            downloaded = _download(source, Path(tmp))
            actual = sha256_of(downloaded)
            if actual != source.sha256:
                raise RuntimeError(
                    f"{source.label}: sha256 mismatch for {source.filename}: expected {source.sha256}, got {actual}"
                )
            downloaded.replace(cached)
    actual = sha256_of(cached)
    if actual != source.sha256:
        raise RuntimeError(
            f"{source.label}: cached {cached} has sha256 {actual}, expected {source.sha256};"
            " delete it to download again"
        )
    return cached


def extract(archive: Path, dest: Path) -> None:
    """Unpack a .tar.gz/.tgz (sdists, npm tarballs) or a .deb into dest."""
    dest.mkdir(parents=True, exist_ok=True)
    if archive.suffix == ".deb":
        _run(["dpkg-deb", "-x", str(archive), str(dest)], dest)
        return
    with tarfile.open(archive) as tar:
        # The "data" filter refuses absolute paths, links out of dest and device files.
        tar.extractall(dest, filter="data")
