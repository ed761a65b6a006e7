"""Open editor buffers of one folder, held once per process: path -> source -> text.

A source is this process's own editor (`api.LOCAL`) or, in the process that owns the folder's
index, a client process's connection. The latest edit of a path wins over the file on disk;
when its editor closes it, the buffer of another editor that still has it open wins, else the
file. The same `Buffers` outlives the roles of its folder (`SharedIndex`): a client keeps its
own buffers here to re-send them to whichever process owns the index next, and a process that
becomes the owner gives them to its new index. The indexer reads only the winning text of each
path (`IndexState.open_docs`)."""

from __future__ import annotations

import threading


class Buffers:
    def __init__(self) -> None:
        self._by_path: dict[str, dict[str, str]] = {}  # path -> source -> text, the latest edit last
        self._lock = threading.Lock()

    def open(self, rel: str, text: str, source: str) -> None:
        with self._lock:
            per = self._by_path.setdefault(rel, {})
            per.pop(source, None)
            per[source] = text

    def close(self, rel: str, source: str) -> bool:
        """Whether `source` had `rel` open."""
        with self._lock:
            per = self._by_path.get(rel)
            if per is None or per.pop(source, None) is None:
                return False
            if not per:
                del self._by_path[rel]
            return True

    def drop(self, source: str) -> list[str]:
        """Close every buffer of a source (a client process went away); the paths it had open."""
        with self._lock:
            rels = [rel for rel, per in self._by_path.items() if source in per]
        for rel in rels:
            self.close(rel, source)
        return rels

    def winner(self, rel: str) -> str | None:
        """The text that wins for `rel`, or None: the file on disk."""
        with self._lock:
            per = self._by_path.get(rel)
            return next(reversed(per.values())) if per else None

    def paths(self) -> list[str]:
        with self._lock:
            return list(self._by_path)

    def of(self, source: str) -> dict[str, str]:
        """One source's buffers, path -> text."""
        with self._lock:
            return {rel: per[source] for rel, per in self._by_path.items() if source in per}
