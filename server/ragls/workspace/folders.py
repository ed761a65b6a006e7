"""The workspace's folders (multi-root): their names, which of them are nested in another, and
which folder's index answers for a folder, a file or a `paths` glob (docs/protocol.md,
"Workspace folders"). Each indexed folder (workspace/folder.py) keeps its own settings and index,
with the same identity as when the folder is opened alone; `WorkspaceFolders`
(workspace/open_folders.py) opens and closes them for every front end."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from ragls.workspace.folder import Folder


class UnknownFolder(ValueError):
    """A `folders` entry that names no folder of the workspace (reported as InvalidParams)."""


def uri_to_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


class Folders:
    def __init__(self) -> None:
        self.items: list[Folder] = []

    @property
    def indexed(self) -> list[Folder]:
        """The folders with an index of their own (not nested in another open folder)."""
        return [f for f in self.items if f.nested_in is None]

    @property
    def multi(self) -> bool:
        """2+ folders: paths in `<rag_context>`, errors and globs carry the folder's name."""
        return len(self.items) >= 2

    def add(self, uri: str, name: str | None) -> Folder | None:
        """Append a folder (None for a non-file URI or a folder already open); call `renest` after."""
        path = uri_to_path(uri)
        if path is None:
            return None
        path = path.resolve()
        if any(f.path == path for f in self.items):
            return None
        base = (name or "").strip() or path.name or str(path)
        taken = {f.name for f in self.items}
        unique, n = base, 1
        while unique in taken:
            n += 1
            unique = f"{base} ({n})"
        folder = Folder(unique, uri, path)
        self.items.append(folder)
        return folder

    def remove(self, uri: str) -> Folder | None:
        path = uri_to_path(uri)
        for f in self.items:
            if f.uri == uri or (path is not None and f.path == path.resolve()):
                self.items.remove(f)
                f.removed = True
                return f
        return None

    def renest(self) -> None:
        """A folder inside another open folder is covered by the outermost one (its index)."""
        for f in self.items:
            outer = [o for o in self.items if o is not f and f.path.is_relative_to(o.path)]
            f.nested_in = min(outer, key=lambda o: len(o.path.parts)).name if outer else None

    def get(self, name: str) -> Folder:
        return next(f for f in self.items if f.name == name)

    def index_of(self, f: Folder) -> tuple[Folder, str]:
        """The indexed folder that answers for `f`, and `f`'s path inside it ('' for itself)."""
        if f.nested_in is None:
            return f, ""
        outer = self.get(f.nested_in)
        return outer, f.path.relative_to(outer.path).as_posix()

    def route(self, path: str | None) -> list[tuple[Folder, str | None]]:
        """The indexed folders a question about `path` asks, each with the path relative to it:
        with 2+ folders, a path starting with a folder's name (`api/src/app.py`) is that
        folder's (a nested folder's, its outer folder's); any other path, or none, is asked of
        every indexed folder as it is."""
        if path is not None and self.multi:
            for name in sorted((f.name for f in self.items), key=len, reverse=True):
                if path.startswith(name + "/") and len(path) > len(name) + 1:
                    target, rel = self.index_of(self.get(name))
                    rest = path[len(name) + 1 :]
                    return [(target, f"{rel}/{rest}" if rel else rest)]
        return [(f, path) for f in self.indexed]

    def owner_of(self, path: Path) -> tuple[Folder, str] | None:
        """The indexed folder containing a file, and the file's path relative to it."""
        path = path.resolve()
        for f in self.indexed:
            if path.is_relative_to(f.path):
                return f, path.relative_to(f.path).as_posix()
        return None

    def select(self, wanted: list[str] | None) -> list[Folder]:
        """The folders a request names (by name or URI); all of them when unset."""
        if wanted is None:
            return list(self.items)
        out: list[Folder] = []
        for w in wanted:
            path = uri_to_path(w)
            hit = next(
                (f for f in self.items if w in (f.name, f.uri) or (path is not None and path.resolve() == f.path)),
                None,
            )
            if hit is None:
                known = ", ".join(repr(f.name) for f in self.items) or "none"
                raise UnknownFolder(f"folders: no workspace folder {w!r} (the folders are {known})")
            if hit not in out:
                out.append(hit)
        return out

    def plan(self, wanted: list[str] | None, globs: list[str] | None) -> list[tuple[Folder, list[str] | None]]:
        """Which indexed folders to search, each with the `paths` globs for its index (None: every
        file). A glob starting with a folder's name (2+ folders) applies to that folder only, the
        rest of it relative to the folder; other globs apply to every folder. A nested folder is
        searched as its part of the folder that indexes it."""
        common, own = split_globs(globs or [], [f.name for f in self.items]) if self.multi else (globs or [], {})
        out: dict[str, list[str] | None] = {}
        for f in self.select(wanted):
            mine: list[str] | None = None
            if globs:
                mine = common + own.get(f.name, [])
                if not mine:
                    continue  # every glob names another folder
            target, rel = self.index_of(f)
            if rel:
                mine = [under(rel, g) for g in mine] if mine is not None else [f"{rel}/**"]
            if target.name in out and out[target.name] is None:
                continue  # already searched whole
            if mine is None:
                out[target.name] = None
            else:
                out[target.name] = [*(out.get(target.name) or []), *mine]
        return [(f, out[f.name]) for f in self.indexed if f.name in out]


def split_globs(globs: list[str], names: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """Globs for every folder, and per folder name the globs prefixed with it (prefix removed)."""
    common: list[str] = []
    own: dict[str, list[str]] = {}
    by_length = sorted(names, key=len, reverse=True)  # `api (2)/x` is not `api`'s
    for g in globs:
        neg = "!" if g.startswith("!") else ""
        body = g[len(neg) :]
        name = next((n for n in by_length if body == n or body.startswith(n + "/")), None)
        if name is None:
            common.append(g)
        else:
            own.setdefault(name, []).append(neg + (body[len(name) + 1 :] or "**"))
    return common, own


def under(rel: str, glob: str) -> str:
    """A folder-relative glob as a glob of the folder containing it (`rel` = its path there).
    A glob without a slash matches at any depth, as in .gitignore, so it stays any-depth below."""
    neg = "!" if glob.startswith("!") else ""
    body = glob[len(neg) :]
    if "/" not in body.rstrip("/"):
        body = "**/" + body
    return f"{neg}{rel}/{body}"
