"""The file watch in a process of its own (`python -m ragls.ingest.watch_process`), run by
`ingest/watcher.py`.

Why a process: watchfiles builds its inotify watches for the whole folder in native code that
holds the GIL (141-168 ms at 10,000 files, once per watch start), and in the server's process
every request waited for it. Here it costs nothing to the server but this small interpreter.

Protocol: one JSON line on stdin, `{"root", "debounce_ms", "force_polling"}`; then one JSON
line on stdout once the watches are set up, `{"ready": true}`, then one per debounced batch, `{"changes": [[change, path], ...]}` (watchfiles' `Change`
values, absolute paths, unfiltered: the server applies the ignore rules), or a last
`{"error": message, "os_error": bool}` before exiting 1. End of stdin (the server closed it,
or died) stops the watch. Imports nothing of ragls: it starts in a few milliseconds."""

from __future__ import annotations

import json
import sys
import threading


def _stop_at_end_of_input(stop: threading.Event) -> None:
    def wait() -> None:
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except (OSError, ValueError):
            pass
        stop.set()

    threading.Thread(target=wait, name="ragls-watch-stdin", daemon=True).start()


class _Stop:
    """watchfiles' stop event. It is first asked once the watches are set up: that is when
    the server hears `{"ready": true}`, and changes from then on are seen."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.told = False

    def is_set(self) -> bool:
        if not self.told:
            self.told = True
            _send({"ready": True})
        return self.stop.is_set()


def _send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> int:
    config = json.loads(sys.stdin.buffer.readline() or b"{}")
    stop = threading.Event()
    _stop_at_end_of_input(stop)
    import watchfiles

    try:
        for changes in watchfiles.watch(
            config["root"],
            watch_filter=None,
            debounce=int(config.get("debounce_ms", 50)),
            step=50,
            stop_event=_Stop(stop),
            force_polling=bool(config.get("force_polling", False)),
            poll_delay_ms=500,
            raise_interrupt=False,
            ignore_permission_denied=True,
        ):
            _send({"changes": [[int(change), path] for change, path in changes]})
    except BrokenPipeError:  # the server is gone
        return 0
    except Exception as exc:  # the server restarts the watch (polling after an OSError)
        try:
            _send({"error": str(exc) or type(exc).__name__, "os_error": isinstance(exc, OSError)})
        except OSError:
            pass
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
