"""The one place that knows which websockets API is installed: Debian's 10.4 has the legacy client
(`websockets.connect(..., extra_headers=...)`), 13 and later have `websockets.asyncio.client.connect(...,
additional_headers=...)`. Both are opened the same way here: no automatic pings (the protocol's heartbeat is a JSON
`ping`, spec/protocol.md#heartbeat), no compression, frames up to the spec's frame limit."""

from __future__ import annotations

import asyncio
import importlib
from typing import Any, Protocol

from websockets.exceptions import ConnectionClosed, InvalidHandshake

from ._generated.limits import FRAME_MAX_BYTES

__all__ = ["ConnectionClosed", "HANDSHAKE_FAILURES", "Socket", "open_socket"]

HANDSHAKE_FAILURES = (OSError, InvalidHandshake, asyncio.TimeoutError, EOFError)
"""What opening a socket raises when the bridge cannot be reached or refuses the upgrade (an HTTP 503, say)."""

OPEN_TIMEOUT_S = 10.0
CLOSE_TIMEOUT_S = 2.0


class Socket(Protocol):
    async def send(self, data: str) -> None: ...

    async def recv(self) -> str | bytes: ...

    async def close(self, code: int = 1000, reason: str = "") -> None: ...

    @property
    def close_code(self) -> int | None: ...

    @property
    def close_reason(self) -> str | None: ...


def _new_client() -> Any | None:
    try:
        return importlib.import_module("websockets.asyncio.client")
    except ImportError:
        return None


async def open_socket(url: str, headers: dict[str, str]) -> Socket:
    """Opens a WebSocket with whichever API is installed; raises one of HANDSHAKE_FAILURES when it cannot."""
    common: dict[str, Any] = {
        "ping_interval": None,
        "compression": None,
        "max_size": FRAME_MAX_BYTES,
        "open_timeout": OPEN_TIMEOUT_S,
        "close_timeout": CLOSE_TIMEOUT_S,
    }
    client = _new_client()
    if client is not None:
        ws: Socket = await client.connect(url, additional_headers=headers, **common)
    else:
        legacy: Any = importlib.import_module("websockets.client")
        ws = await legacy.connect(url, extra_headers=headers, **common)
    return ws


def abort(ws: Socket) -> None:
    """Drops the TCP connection at once, without a closing handshake (a dead connection would never answer one)."""
    transport: Any = getattr(ws, "transport", None)
    if transport is not None:
        transport.abort()
