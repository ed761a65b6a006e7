"""The owner socket's JSON-RPC protocol: pygls's `JsonRPCProtocol` with ragls's framing and error
answers, used by both ends (sharing/owner_rpc.py). Kept apart so that pygls, and the lsprotocol types it
loads (~0.6 s of CPU), are imported on a process's first owner connection, not by every `ragls
search` or `ragls snapshot` that serves an owner socket nobody connects to."""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from typing import Any

from pygls.exceptions import JsonRpcException
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCProtocol,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)

from ragls.system import stdio

log = logging.getLogger("ragls.sharing.owner_rpc")

INVALID_REQUEST = -32600


@functools.cache
def _converter() -> Any:
    # pygls logs every message it sends at INFO, and every error answer with a traceback:
    # ragls logs its own failures (and `ragls mcp` logs INFO to stderr).
    logging.getLogger("pygls").setLevel(logging.WARNING)
    logging.getLogger("pygls.protocol.json_rpc").setLevel(logging.CRITICAL)
    converter = default_converter()
    # Params and results stay JSON (dicts): pydantic reads them, not cattrs.
    converter.register_structure_hook(
        JsonRPCRequestMessage,
        lambda o, cls: cls(id=o["id"], method=o["method"], jsonrpc=o["jsonrpc"], params=o.get("params")),
    )
    converter.register_structure_hook(
        JsonRPCNotification,
        lambda o, cls: cls(method=o["method"], jsonrpc=o["jsonrpc"], params=o.get("params")),
    )
    converter.register_structure_hook(
        JsonRPCResponseMessage, lambda o, cls: cls(id=o["id"], jsonrpc=o["jsonrpc"], result=o.get("result"))
    )
    return converter


class _Host:
    """What pygls's protocol asks of its server: every handler here is a coroutine, so no pool."""

    thread_pool = None

    def _report_server_error(self, error: Exception, source: Any) -> None:
        log.debug("owner socket: %s (%s)", error, getattr(source, "__name__", source))


class OwnerProtocol(stdio.ErrorAnswers, JsonRPCProtocol):
    """pygls's JSON-RPC protocol, answering what it would drop: a request that cannot be read
    gets an error with its id (never a client waiting forever), a message that is no JSON-RPC
    object an `invalid request`, unreadable JSON and framing faults a parse error."""

    def __init__(self) -> None:
        super().__init__(_Host(), _converter())  # type: ignore[arg-type]

    def _serialize_message(self, data: Any) -> Any:
        # Params and results are JSON already (model_dump): no cattrs walk through them.
        if isinstance(data, JsonRPCResponseMessage):
            return {"jsonrpc": data.jsonrpc, "id": data.id, "result": data.result}
        if isinstance(data, JsonRPCRequestMessage):
            return {"jsonrpc": data.jsonrpc, "id": data.id, "method": data.method, "params": data.params}
        return super()._serialize_message(data)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except (JsonRpcException, KeyError, TypeError) as exc:
            if "id" not in data:
                raise
            self.send_error(data["id"], INVALID_REQUEST, f"malformed message: {exc or type(exc).__name__}")
            return stdio.Dropped()

    def handle_message(self, message: Any) -> None:
        if isinstance(message, stdio.Dropped):
            return
        if getattr(message, "jsonrpc", None) != "2.0":  # valid JSON, but no JSON-RPC 2.0 object: `[1, 2]`
            rid = message.get("id") if isinstance(message, dict) else getattr(message, "id", None)
            self.send_error(rid if isinstance(rid, int | str) else None, INVALID_REQUEST, "not a JSON-RPC 2.0 message")
            return
        super().handle_message(message)

    def read_error(self, error: Exception) -> None:
        if not self.unreadable(error):
            log.warning("owner socket: could not handle a message: %s", error)


async def read(reader: asyncio.StreamReader, protocol: OwnerProtocol) -> None:
    await stdio.run(threading.Event(), stdio.LoopReader(reader), protocol, protocol.framing_error, protocol.read_error)
