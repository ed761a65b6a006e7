"""The plain-JSON `starting` status (frontends/lsp/early_status.py) is exactly what ragls.status builds for the
same folders before their settings are read: same keys, same values (its `display` included),
valid IndexStatus."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragls.config import Settings
from ragls.frontends.lsp.early_status import starting_status as early
from ragls.protocol import EmbedderInfo, FolderStatus, IndexStatus, StoreInfo
from ragls.status import folder_entry, starting_status, workspace_status

_UNKNOWN = {"embedder": EmbedderInfo(provider="", model="", dimension=0), "store": StoreInfo(kind="", location="")}


def _built(folders: list[tuple[str, str, Path, str | None]]) -> dict[str, object]:
    """What RaglsServer.status() assembles for folders without an index (settings not read)."""
    own = {
        name: starting_status(path, Settings(), None).model_copy(update=_UNKNOWN)
        for name, _uri, path, nested in folders
        if nested is None
    }
    parts: list[tuple[FolderStatus, IndexStatus | None]] = []
    for name, uri, path, nested in folders:
        if nested is None:
            parts.append((folder_entry(name, uri, path, own[name]), own[name]))
        else:
            parts.append((folder_entry(name, uri, path, own[nested], nested), None))
    return workspace_status(parts).model_dump(by_alias=True)


@pytest.mark.parametrize("shape", ["one folder", "two folders", "a nested folder"])
def test_early_status_equals_the_models_status(tmp_path: Path, shape: str) -> None:
    a, b = tmp_path / "app", tmp_path / "lib"
    a.mkdir()
    b.mkdir()
    folders: list[tuple[str, str, Path, str | None]] = [("app", a.as_uri(), a, None)]
    if shape == "two folders":
        folders.append(("lib", b.as_uri(), b, None))
    if shape == "a nested folder":
        inner = a / "pkg"
        inner.mkdir()
        folders.append(("pkg", inner.as_uri(), inner, "app"))
    got = early(folders)
    assert got == _built(folders)
    assert IndexStatus.model_validate(got).model_dump(by_alias=True) == got
    assert got["state"] == "indexing" and got["phase"] == "starting"
    assert [f["name"] for f in got["folders"]] == [f[0] for f in folders]  # type: ignore[index]
    # what clients show, decided here too (status_display.py): a folder line each from 2 folders on
    shown = got["display"]
    assert shown["health"] == "indexing" and shown["text"] == "indexing"  # type: ignore[index]
    assert shown["tooltip"][0] == "State: indexing (starting)"  # type: ignore[index]
    folder_lines = [t for t in shown["tooltip"] if t.startswith("Folder ")]  # type: ignore[index]
    assert len(folder_lines) == (len(folders) if len(folders) >= 2 else 0)
