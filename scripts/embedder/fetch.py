"""Download, verify, licence-check and unpack the training packages of sources.toml.

Registries only (PyPI, npm, Debian), with their ordinary clients or the Debian pool that apt
itself uses. Every package is refused unless its licence is permissive, and unless none of its
names is evaluated (any eval sources.toml) or on the training blocklist.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tarfile
import tomllib
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

POOL = "http://deb.debian.org/debian"
# Security updates live in their own archive; apt's current version of a package may be only there.
SECURITY_POOL = "http://deb.debian.org/debian-security/pool/updates"
_ALLOW = re.compile(
    r"\b(MIT|Expat|X11|BSD|Apache|ISC|Zlib|Unlicense|public[ -]domain|CC0|BSL|Boost|PSF|Python|0BSD|MS-PL)\b", re.I
)
_DENY = re.compile(r"\b(A?GPL|LGPL|MPL|EPL|CDDL|SSPL|CC-BY-(NC|SA)|proprietary)", re.I)


@dataclass
class Package:
    registry: str
    package: str
    version: str = ""
    # Filled in by fetch():
    file: str = ""
    sha256: str = ""
    licence: str = ""
    names: list[str] = field(default_factory=list)  # every name the project is known by
    root: str = ""  # unpacked folder
    # Folders of the unpacked sources not mined (sources.toml): code bundled under another
    # licence than the package's own.
    exclude: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.package}-{self.version}"


class Refused(RuntimeError):
    """A package that may not be used (licence, evaluation, blocklist)."""


def normalise(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def name_hash(name: str) -> str:
    """The blocklist's hash: sha256 of the normalised name, first 16 hex digits."""
    return hashlib.sha256(normalise(name).encode()).hexdigest()[:16]


def aliases(name: str) -> set[str]:
    """A registry name and the upstream names it stands for (Debian and npm decorate them)."""
    out = {name}
    bare = name.split("/")[-1]  # npm scope
    out.add(bare)
    stem = re.sub(r"-(dev|java|cil-dev|cil)$", "", bare)
    stem = re.sub(r"^(golang-(github|gopkg|golang)-|librust-|rust-|ruby-|php-|python3?-|node-)", "", stem)
    out.add(stem)
    parts = stem.split("-")
    if name.startswith("golang-github-") and len(parts) >= 2:
        out.add("-".join(parts[1:]))  # owner-repo -> repo
        out.add(parts[-1])
    if stem.startswith("lib") and len(stem) > 4:
        out.add(stem[3:])
    out.add(re.sub(r"\d+$", "", stem))  # nlohmann-json3, libuv1
    return {a for a in out if len(normalise(a)) >= 2}


def load_blocklist(path: Path) -> set[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")}


def eval_names(paths: list[Path], related: dict[str, list[str]] | None = None) -> set[str]:
    """Normalised names of every evaluated project in the given eval sources.toml files, and
    of the packages `related` declares to be the same project."""
    out: set[str] = set()
    for path in paths:
        if not path.is_file():
            continue
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        for proj in data.get("project", []):
            for key in ("name", "package"):
                if proj.get(key):
                    out.update(normalise(a) for a in aliases(str(proj[key])))
    for key, names in (related or {}).items():
        if normalise(key) in out:
            out.update(normalise(a) for name in names for a in aliases(name))
    return out


def commit_task_names(path: Path, split: str = "held-out") -> set[str]:
    """Normalised names (GitHub owner and repository, with their aliases) of the commit task's
    repositories of one split (eval/commits.toml): a held-out repository is measured on, so the
    model must never have been trained on it. Not the task's own short labels, which can be
    generic (`gradle-plugin`)."""
    from ragls.evaluation.commits import load_config  # the task's own reader (and its default split)

    if not path.is_file():
        return set()
    return {
        normalise(a)
        for repo in load_config(path).repo
        if repo.split == split
        for part in repo.github.split("/")
        for a in aliases(part)
    }


def issue_task_names(path: Path, split: str | None = None) -> set[str]:
    """Normalised names (GitHub owner and repository, with their aliases) of the issue task's
    repositories (eval/issues.toml) of one split, or of every split: its questions are asked of
    the repository's own code, so a model trained on that code is measured on what it saw (on
    a dev repository, the choices made there are flattered)."""
    from ragls.evaluation.issues import load_config  # the task's own reader

    if not path.is_file():
        return set()
    return {
        normalise(a)
        for repo in load_config(path).repo
        if split is None or repo.split == split
        for part in repo.github.split("/")
        for a in aliases(part)
    }


def check_excluded(pkg: Package, blocklist: set[str], evaluated: set[str]) -> None:
    for alias in pkg.names:
        if name_hash(alias) in blocklist:
            raise Refused(f"{pkg.package}: name {alias!r} is on the training blocklist")
        if normalise(alias) in evaluated:
            raise Refused(f"{pkg.package}: name {alias!r} is an evaluated project")


def check_licence(pkg: Package) -> None:
    if not _ALLOW.search(pkg.licence) or _DENY.search(pkg.licence):
        raise Refused(f"{pkg.package}: licence {pkg.licence!r} is not permissive")


def sha256_of(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _run(cmd: list[str], cwd: Path) -> str:
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({result.returncode}): {result.stderr[-1000:]}")
    return result.stdout


def _get(url: str, target: Path) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": "ragls-train"})
    with urllib.request.urlopen(request, timeout=600) as response, target.open("wb") as out:
        shutil.copyfileobj(response, out)


def _apt_field(package: str, name: str) -> str:
    out = subprocess.run(["apt-cache", "show", package], capture_output=True, text=True, check=True).stdout
    m = re.search(rf"^{name}: (.+)$", out, re.M)
    return m.group(1).strip() if m else ""


def _copyright_licence(text: str) -> str:
    """The licence of `Files: *` in a machine-readable debian/copyright, else the first one."""
    stanzas = re.split(r"\n\s*\n", text)
    for stanza in stanzas:
        if re.search(r"^Files:\s*\*\s*$", stanza, re.M):
            m = re.search(r"^License:\s*(.+)$", stanza, re.M)
            if m:
                return m.group(1).strip()
    m = re.search(r"^License:\s*(.+)$", text, re.M)
    return m.group(1).strip() if m else ""


def _unpack_tar(archive: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")


def _pkg_info_licence(dest: Path) -> str:
    """Licence of an unpacked sdist: License-Expression, licence classifiers, or License."""
    info = next(iter(sorted(dest.glob("*/PKG-INFO"))), None)
    text = info.read_text(errors="replace") if info else ""
    expr = re.findall(r"^License-Expression: (.+)$", text, re.M)
    classifiers = [c.split("::")[-1].strip() for c in re.findall(r"^Classifier: (License ::.+)$", text, re.M)]
    plain = re.findall(r"^License: (.+)$", text, re.M)
    return "; ".join([*expr, *classifiers]) or (plain[0][:80] if plain else "")


def _pypi(pkg: Package, dl: Path, dest: Path) -> None:
    # The simple index (PEP 691 JSON) names the sdist and its sha256; `pip download` of an
    # sdist would build its metadata, which can mean building its build backend from source.
    index = f"https://pypi.org/simple/{re.sub(r'[-_.]+', '-', pkg.package).lower()}/"  # PEP 503 name
    request = urllib.request.Request(index, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        files = json.load(response)["files"]
    wanted = {
        f"{pkg.package}-{pkg.version}.tar.gz".lower(),
        f"{pkg.package.replace('-', '_')}-{pkg.version}.tar.gz".lower(),
    }
    sdist = next(f for f in files if f["filename"].lower() in wanted)
    target = dl / sdist["filename"]
    if not target.is_file():
        _get(sdist["url"], target)
    pkg.file, pkg.sha256 = target.name, sha256_of(target)
    if pkg.sha256 != sdist["hashes"]["sha256"]:
        raise RuntimeError(f"{pkg.label}: sha256 mismatch with the PyPI index")
    _unpack_tar(target, dest)
    pkg.licence = _pkg_info_licence(dest)
    check_licence(pkg)


def _npm(pkg: Package, dl: Path, dest: Path) -> None:
    spec = f"{pkg.package}@{pkg.version}"
    view = json.loads(_run(["npm", "view", spec, "license", "dist.tarball", "--json"], dl))
    pkg.licence = str(view.get("license", ""))
    check_licence(pkg)
    target = dl / view["dist.tarball"].rsplit("/", 1)[-1]
    if not target.is_file():
        packed = _run(["npm", "pack", spec, "--pack-destination", str(dl)], dl).strip().splitlines()[-1]
        (dl / packed).replace(target)
    pkg.file, pkg.sha256 = target.name, sha256_of(target)
    _unpack_tar(target, dest)


def _debian(pkg: Package, dl: Path, dest: Path) -> None:
    pkg.version = _apt_field(pkg.package, "Version")
    source = _apt_field(pkg.package, "Source").split(" ")[0] or pkg.package
    pkg.names.extend(aliases(source))
    _run(["apt-get", "download", f"{pkg.package}={pkg.version}"], dl)
    target = next(dl.glob(f"{pkg.package}_*.deb"))
    pkg.file, pkg.sha256 = target.name, sha256_of(target)
    _run(["dpkg-deb", "-x", str(target), str(dest)], dl)
    copyright_file = dest / "usr" / "share" / "doc" / pkg.package / "copyright"
    pkg.licence = _copyright_licence(copyright_file.read_text(errors="replace")) if copyright_file.is_file() else ""
    check_licence(pkg)


def _binary_copyright(package: str, dl: Path) -> str:
    """debian/copyright as installed by the binary package (dpkg-deb, no install)."""
    _run(["apt-get", "download", package], dl)
    deb = next(dl.glob(f"{package}_*.deb"))
    tmp = dl / "binary"
    _run(["dpkg-deb", "-x", str(deb), str(tmp)], dl)
    found = next(iter(sorted(tmp.glob("usr/share/doc/*/copyright"))), None)
    text = found.read_text(errors="replace") if found else ""
    shutil.rmtree(tmp)
    return text


def _debian_src(pkg: Package, dl: Path, dest: Path) -> None:
    field_ = _apt_field(pkg.package, "Source")
    source = field_.split(" ")[0] or pkg.package
    m = re.search(r"\((.+)\)", field_)
    version = m.group(1) if m else _apt_field(pkg.package, "Version")
    version = re.sub(r"\+b\d+$", "", version)
    pkg.names.extend(aliases(source))
    pkg.version = version
    prefix = source[:4] if source.startswith("lib") else source[0]
    plain = version.split(":", 1)[-1]
    dsc = dl / f"{source}_{plain}.dsc"
    base = ""
    for pool in (f"{POOL}/pool", SECURITY_POOL):
        base = f"{pool}/main/{prefix}/{source}"
        if dsc.is_file():
            break
        try:
            _get(f"{base}/{dsc.name}", dsc)
            break
        except urllib.error.HTTPError as exc:
            dsc.unlink(missing_ok=True)
            if exc.code != 404 or pool == SECURITY_POOL:
                raise
    text = dsc.read_text(errors="replace")
    sums = re.search(r"^Checksums-Sha256:\n((?: .+\n?)+)", text, re.M)
    assert sums, f"{dsc.name}: no Checksums-Sha256"
    files = [line.split() for line in sums.group(1).strip().splitlines()]
    upstream = [f for f in files if ".orig.tar." in f[2] and not f[2].endswith(".asc")]
    debian = [f for f in files if ".debian.tar." in f[2]]
    # A native package has a single tarball holding both upstream code and debian/.
    if not upstream:
        upstream = [f for f in files if re.search(r"\.tar\.(gz|xz|bz2)$", f[2])]
    sha, _, name = upstream[0]
    orig = dl / name
    if not orig.is_file():
        _get(f"{base}/{name}", orig)
    if sha256_of(orig) != sha:
        raise RuntimeError(f"{name}: sha256 mismatch with {dsc.name}")
    pkg.file, pkg.sha256 = name, sha
    data = ""
    if debian:
        dsha, _, dname = debian[0]
        deb_tar = dl / dname
        try:
            if not deb_tar.is_file():
                _get(f"{base}/{dname}", deb_tar)
            if sha256_of(deb_tar) != dsha:
                raise RuntimeError(f"{dname}: sha256 mismatch with {dsc.name}")
            with tarfile.open(deb_tar) as tar:
                member = next((m for m in tar.getmembers() if m.name.endswith("debian/copyright")), None)
                data = tar.extractfile(member).read().decode(errors="replace") if member else ""  # type: ignore[union-attr]
        except urllib.error.HTTPError:
            data = ""  # some mirrors serve no debian.tar: the binary package has the same file
    if not data:
        data = _binary_copyright(pkg.package, dl)
    pkg.licence = _copyright_licence(data)
    check_licence(pkg)
    _unpack_tar(orig, dest)


FETCHERS = {"pypi": _pypi, "npm": _npm, "debian": _debian, "debian-src": _debian_src}


def fetch(pkg: Package, cache: Path, blocklist: set[str], evaluated: set[str]) -> Package:
    """Download and unpack one package into cache/src/<package>; raises Refused or errors."""
    pkg.names = sorted(aliases(pkg.package))
    check_excluded(pkg, blocklist, evaluated)
    dl = cache / "downloads" / normalise(pkg.package)
    dl.mkdir(parents=True, exist_ok=True)
    dest = cache / "src" / normalise(pkg.package)
    if dest.exists():
        shutil.rmtree(dest)
    FETCHERS[pkg.registry](pkg, dl, dest)
    pkg.names = sorted(set(pkg.names))
    check_excluded(pkg, blocklist, evaluated)  # Debian source names are known only now
    pkg.root = str(dest)
    return pkg


def record(pkg: Package) -> dict[str, object]:
    return {k: v for k, v in asdict(pkg).items() if k != "root"}
