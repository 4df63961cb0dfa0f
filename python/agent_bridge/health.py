"""The optional HTTP health endpoint (spec/protocol.md §2.6): GET (or HEAD) on the configured path returns the
ConnectorHealth JSON, 200 while at least one agent is connected (ok, degraded) and 503 when none is (down), so a
probe can use the status code alone; 404 for another path, 405 for another method. A tiny HTTP/1.0 server on
asyncio's start_server: one request per connection, nothing else needed."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from ._generated.messages import ConnectorAgentHealth, ConnectorHealth, ConnectorStatus

log = logging.getLogger("agent_bridge")

_REASONS = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error", 503: "Service Unavailable"}
_READ_TIMEOUT_S = 10.0


def connector_status(agents: Mapping[str, ConnectorAgentHealth]) -> ConnectorStatus:
    """ok: every agent connected; degraded: some; down: none."""
    up = sum(1 for a in agents.values() if a.connected)
    return "ok" if up and up == len(agents) else "degraded" if up else "down"


class HealthServer:
    def __init__(self, server: asyncio.AbstractServer, host: str, port: int, path: str) -> None:
        self._server = server
        self.port = port
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{port}{path}"

    async def close(self) -> None:
        self._server.close()
        await self._server.wait_closed()


class HealthServerError(OSError):
    """The health endpoint could not listen (decision C5: the start stops with one line naming it)."""


async def start_health_server(
    host: str, port: int, path: str, report: Callable[[], ConnectorHealth]
) -> HealthServer:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _READ_TIMEOUT_S)
            method, target, *_ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
            status, body, extra = _answer(method, target.split("?", 1)[0], path, report)
            text = json.dumps(body, separators=(",", ":")).encode("utf-8")
            headers = {
                "Content-Type": "application/json; charset=utf-8",
                "Cache-Control": "no-store",
                "Content-Length": str(len(text)),
                "Connection": "close",
                **extra,
            }
            lines = [f"HTTP/1.1 {status} {_REASONS[status]}", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
            writer.write("\r\n".join(lines).encode("latin-1") + (b"" if method == "HEAD" else text))
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ValueError, OSError):
            pass  # not an HTTP request we can answer: drop it
        finally:
            writer.close()

    try:
        server = await asyncio.start_server(serve, host, port)
    except OSError as err:
        raise HealthServerError(
            err.errno, f"the health endpoint cannot listen on {host}:{port} (health.port, health.host): {err.strerror}"
        ) from None
    bound = server.sockets[0].getsockname()
    return HealthServer(server, str(bound[0]), int(bound[1]), path)


def _answer(
    method: str, request_path: str, path: str, report: Callable[[], ConnectorHealth]
) -> tuple[int, Any, dict[str, str]]:
    if request_path != path:
        return 404, {"code": "NOT_FOUND", "error": f"No such path; the health endpoint is {path}."}, {}
    if method not in ("GET", "HEAD"):
        return 405, {"code": "INVALID_REQUEST", "error": "Use GET."}, {"Allow": "GET, HEAD"}
    try:
        health = report()
    except Exception:
        log.exception("the health report failed")
        return 500, {"code": "INTERNAL_ERROR", "error": "The health report failed."}, {}
    return (503 if health.status == "down" else 200), health.to_json(), {}
