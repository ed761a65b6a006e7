"""A folder's status without indexing it (`ragls status`): the live status of the ragls process
that owns the folder (an editor, an agent's `ragls mcp`), else the counts of the index on disk,
which `message` says are not live."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ragls.config import Settings
from ragls.embedding import model_identity
from ragls.protocol import EmbedderInfo, IndexStatus, Progress, StoreInfo
from ragls.status import build_status
from ragls.store import manifest_path
from ragls.store.manifest import DELETING, DENSE, FAILED, LEXICAL, Manifest

NOT_INDEXED = "is not indexed yet (ragls index indexes it)"
FROM_DISK = "read from the index on disk; no server is running (ragls index brings it up to date)"


def status_at_rest(root: Path, settings: Settings, warnings: list[str]) -> IndexStatus:
    live = live_status(root, settings)
    if live is not None:  # a ragls process owns the folder: its view is the current one
        return live
    model_id, dim = model_identity(settings.embedder)
    path = manifest_path(root, settings, model_id, dim)
    st = build_status(root, settings, warnings=warnings)
    st.embedder = EmbedderInfo(provider=settings.embedder.provider, model=model_id, dimension=dim)
    st.store = StoreInfo(kind=st.store.kind, location=str(path.parent))
    if not path.exists():
        st.message = f"{root} {NOT_INDEXED}"
        return st
    m = Manifest(path)
    try:
        recs = [r for r in m.all().values() if r.status != DELETING]
    finally:
        m.close()
    n = Counter(r.status for r in recs)
    searchable = len(recs) - n[FAILED]
    complete = not n[LEXICAL]
    return st.model_copy(
        update={
            "state": "ready" if complete else "indexing",
            "phase": "idle" if complete else "dense",
            "files_total": len(recs),
            "files_indexed": n[DENSE],
            "files_failed": n[FAILED],
            "chunks": sum(len(r.chunk_ids) for r in recs),
            "lexical": Progress(done=n[LEXICAL] + n[DENSE], total=searchable),
            "dense": Progress(done=n[DENSE], total=searchable),
            "message": FROM_DISK,
        }
    )


def indexed_here(root: Path, settings: Settings) -> bool:
    """An index of `root` with the folder's model exists on this machine."""
    return manifest_path(root, settings, *model_identity(settings.embedder)).exists()


def live_status(root: Path, settings: Settings) -> IndexStatus | None:
    """The owner's status when a ragls process owns the folder, without becoming its owner."""
    from ragls.sharing.owner import OwnerLock, rendezvous
    from ragls.sharing.owner_rpc import OwnerProxy

    try:
        where = rendezvous(root, settings)
    except OSError:  # no sharing on this system (e.g. another user's cache): nobody to ask
        return None
    probe = OwnerLock(where.lock)
    if probe.try_acquire():  # nobody owns it
        probe.release()
        return None
    try:
        proxy = OwnerProxy(where.socket)
    except OSError:
        return None
    try:
        return proxy.status().status
    finally:
        proxy.close()
