"""One resilient WebSocket to the bridge, the state machine of both the app client and the agent connector.

It authenticates in the handshake (`Authorization: Bearer`), calls the connection ready only when its first ping
is answered (a refused token is upgraded too, decision W1), keeps the bridge's explanation of a close, reads every
frame with the generated parser of its endpoint, pings every heartbeat interval and drops the connection when no
pong follows in time, and reconnects with exponential backoff and jitter until told to stop, refused for good (a
connection error whose `retry` is false, W19) or out of attempts. Time goes through an injectable Clock.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any, Callable, Generic, Literal, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from . import _ws
from ._generated.errors import ERROR_CODES, ERRORS, ErrorCode
from ._generated.limits import HEARTBEAT_INTERVAL_MS, HEARTBEAT_TIMEOUT_MS
from ._generated.messages import MessageError, PingMessage, UnknownMessageType
from .backoff import Random, ReconnectPolicy, backoff_delay_ms, may_retry
from .clock import SYSTEM_CLOCK, Clock
from .frames import dumps

log = logging.getLogger("agent_bridge")

In = TypeVar("In")
Carrier = Literal["header", "query"]
State = Literal["connecting", "open", "reconnecting", "closed"]

FINAL_CODES: frozenset[str] = frozenset(
    code for code in ERROR_CODES if ERRORS[code].scope == "connection" and not ERRORS[code].retry
)
"""Connection errors after which reconnecting cannot help: the same token would be refused again, or another
connection of the same agent took this one's place (CONNECTION_REPLACED, decision C3)."""

ABNORMAL_CLOSE = 1006


@dataclass(frozen=True)
class CloseInfo:
    """A socket's close: its code, and its reason (or the code of the connection error that announced it)."""

    code: int
    reason: str


@dataclass(frozen=True)
class ConnectionError_:
    """The bridge's explanation of the close that follows: an `error` of connection scope, without event_id."""

    code: ErrorCode
    error: str


@dataclass(frozen=True)
class InvalidFrame:
    """A JSON frame that breaks the endpoint's schema, and what can still be read of it."""

    type: str | None
    event_id: str | None
    problem: str


class BridgeConnectionError(Exception):
    """Why start() gave up: the last close."""

    def __init__(self, info: CloseInfo) -> None:
        super().__init__(info.reason or f"connection closed ({info.code})")
        self.close_code = info.code
        self.reason = info.reason


class Listener(Generic[In]):
    """What a connection tells its owner; every method is a no-op until overridden."""

    def on_state(self, state: State) -> None: ...
    def on_ready(self) -> None: ...
    def on_message(self, message: In) -> None: ...
    def on_invalid(self, frame: InvalidFrame) -> None: ...
    def on_down(self, info: CloseInfo) -> None: ...
    def on_reconnecting(self, attempt: int, delay_ms: float) -> None: ...
    def on_closed(self, info: CloseInfo) -> None: ...
    def on_pong(self, at: float) -> None: ...


def with_query(url: str, **params: str | None) -> str:
    """`url` with each parameter set (or removed when None), the rest of its query kept."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in params]
    query += [(k, v) for k, v in params.items() if v is not None]
    return urlunsplit(parts._replace(query=urlencode(query)))


def connection_error_in(message: object) -> ConnectionError_ | None:
    """The connection error a frame carries, if it is one: an `error` without event_id of connection scope."""
    if getattr(message, "type", None) != "error" or getattr(message, "event_id", None) is not None:
        return None
    code: Any = getattr(message, "code", None)
    spec = ERRORS.get(code)
    if spec is None or spec.scope != "connection":
        return None
    return ConnectionError_(code, str(getattr(message, "error", "") or ""))


class BridgeConnection(Generic[In]):
    """`In`: what the bridge sends on the endpoint (read by `parse`, the generated parser of its direction)."""

    def __init__(
        self,
        *,
        url: str,
        token: str,
        parse: Callable[[object], In],
        listener: Listener[In],
        policy: ReconnectPolicy,
        clock: Clock = SYSTEM_CLOCK,
        random: Random | None = None,
        carrier: Carrier = "header",
        heartbeat_interval_ms: float | None = None,
        heartbeat_timeout_ms: float | None = None,
    ) -> None:
        self._url = url
        self._token = token
        self._parse = parse
        self._listener = listener
        self._policy = policy
        self._clock = clock
        self._random = random
        self._carrier = carrier
        self._interval_s = (heartbeat_interval_ms or HEARTBEAT_INTERVAL_MS) / 1000
        self._timeout_s = (heartbeat_timeout_ms or HEARTBEAT_TIMEOUT_MS) / 1000
        self._ws: _ws.Socket | None = None
        self._outbox: asyncio.Queue[str] | None = None
        self._run_task: asyncio.Task[None] | None = None
        self._started: asyncio.Future[None] | None = None
        self._pong_deadline: asyncio.Task[None] | None = None
        self._attempt = 0
        self._accepted = False
        self._stopped = False
        self.closing_error: ConnectionError_ | None = None
        """The connection error the bridge sent on the current or last socket, if any."""
        self.state: State = "closed"

    @property
    def ready(self) -> bool:
        """The bridge accepted this socket (its first pong came); false again once it went down."""
        return self._accepted

    async def start(self) -> None:
        """Connects; returns once the bridge has accepted the token. Raises BridgeConnectionError only when it gives
        up: refused for good, or out of retries (a bridge not reachable yet is retried with the backoff)."""
        if self._run_task is not None:
            raise RuntimeError("the connection was already started")
        loop = asyncio.get_running_loop()
        started = self._started = loop.create_future()
        self._run_task = loop.create_task(self._run())
        await started

    def send(self, frame: dict[str, Any]) -> bool:
        """Queues the frame on the open socket (frames go out in order); False when no socket is open."""
        if self._outbox is None or self.state != "open":
            return False
        self._outbox.put_nowait(dumps(frame))
        return True

    async def close(self) -> None:
        """Closes for good (no reconnect); returns once the connection has finished."""
        self._stopped = True
        if self._ws is not None and self._run_task is not None and not self._run_task.done():
            try:
                await asyncio.wait_for(self._ws.close(1000, "client closing"), _ws.CLOSE_TIMEOUT_S + 1)
            except Exception:  # noqa: BLE001 - a socket that cannot close cleanly is dropped below
                _ws.abort(self._ws)
        if self._run_task is not None and not self._run_task.done():
            # Let the loop report the close it is reading; cancel it only if it does not end by itself.
            await asyncio.wait({self._run_task}, timeout=1.0)
            self._run_task.cancel()
            try:
                await self._run_task
            except asyncio.CancelledError:
                pass
        self._finish(CloseInfo(1000, "client closing"))

    # ---- the loop: one socket after another ---------------------------------------------------------------

    def _set_state(self, state: State) -> None:
        self.state = state
        self._listener.on_state(state)

    async def _run(self) -> None:
        try:
            while True:
                info = await self._session()
                self._accepted = False
                self._listener.on_down(info)
                if (
                    self._stopped
                    or info.reason in FINAL_CODES
                    or not self._policy.enabled
                    or not may_retry(self._attempt, self._policy.max_retries)
                ):
                    self._finish(info)
                    return
                self._attempt += 1
                delay_ms = (
                    backoff_delay_ms(self._attempt, self._policy)
                    if self._random is None
                    else backoff_delay_ms(self._attempt, self._policy, self._random)
                )
                self._set_state("reconnecting")
                self._listener.on_reconnecting(self._attempt, delay_ms)
                await self._clock.sleep(delay_ms / 1000)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # a bug here must not leave the owner waiting for ever
            log.exception("the connection loop failed")
            self._finish(CloseInfo(ABNORMAL_CLOSE, f"client failure: {err.__class__.__name__}"))

    async def _session(self) -> CloseInfo:
        """One socket, from its handshake to its close."""
        self._set_state("connecting" if self._attempt == 0 else "reconnecting")
        self.closing_error = None
        url, headers = self._url, {}
        if self._carrier == "query":
            url = with_query(url, token=self._token)
        else:
            headers["Authorization"] = f"Bearer {self._token}"
        try:
            ws = await _ws.open_socket(url, headers)
        except _ws.HANDSHAKE_FAILURES as err:
            log.debug("handshake failed: %s", err)
            return CloseInfo(ABNORMAL_CLOSE, "")
        self._ws = ws
        self._outbox = asyncio.Queue()
        writer = asyncio.create_task(self._write(ws, self._outbox))
        heartbeat = asyncio.create_task(self._heartbeat(ws))
        # The upgrade completes even for a refused token (W1): an open socket neither makes the connection ready
        # nor resets the backoff; the pong to this first ping does (decision C1).
        self._set_state("open")
        self.send(PingMessage().to_json())
        try:
            while True:
                data = await ws.recv()
                self._receive(data)
        except _ws.ConnectionClosed:
            pass
        finally:
            for task in (writer, heartbeat, self._pong_deadline):
                if task is not None:
                    task.cancel()
            self._pong_deadline = None
            self._outbox = None
        code = ws.close_code if ws.close_code is not None else ABNORMAL_CLOSE
        return CloseInfo(code, ws.close_reason or self._final_refusal())

    def _final_refusal(self) -> str:
        """The code of the connection error that refused this socket for good, if any."""
        error = self.closing_error
        return error.code if error is not None and error.code in FINAL_CODES else ""

    async def _write(self, ws: _ws.Socket, outbox: asyncio.Queue[str]) -> None:
        while True:
            text = await outbox.get()
            try:
                await ws.send(text)
            except _ws.ConnectionClosed:
                return  # the reader sees the close too and reports it
            except Exception:  # one frame that cannot be sent must not stop the frames after it
                log.exception("a frame could not be sent")

    async def _heartbeat(self, ws: _ws.Socket) -> None:
        while True:
            await self._clock.sleep(self._interval_s)
            if not self.send(PingMessage().to_json()):
                return
            if self._pong_deadline is None:
                self._pong_deadline = asyncio.create_task(self._await_pong(ws))

    async def _await_pong(self, ws: _ws.Socket) -> None:
        await self._clock.sleep(self._timeout_s)
        # No pong in time: the connection is dead even if TCP has not noticed; drop it and reconnect.
        self._pong_deadline = None
        log.info("no pong within %.1f s: the connection is taken for dead", self._timeout_s)
        _ws.abort(ws)

    def _receive(self, data: str | bytes) -> None:
        try:
            raw: object = json.loads(data)
        except ValueError:
            return
        try:
            message = self._parse(raw)
        except MessageError as err:
            fields: dict[str, Any] = raw if isinstance(raw, dict) else {}
            kind = fields.get("type")
            if isinstance(err, UnknownMessageType):
                return  # a message type of a later version: ignored (decision C2)
            event_id = fields.get("event_id")
            self._listener.on_invalid(
                InvalidFrame(
                    kind[:32] if isinstance(kind, str) else None,
                    event_id if isinstance(event_id, str) else None,
                    str(err),
                )
            )
            return
        if getattr(message, "type", None) == "pong":
            self._on_pong()
            return
        self.closing_error = connection_error_in(message) or self.closing_error
        self._listener.on_message(message)

    def _on_pong(self) -> None:
        if self._pong_deadline is not None:
            self._pong_deadline.cancel()
            self._pong_deadline = None
        self._listener.on_pong(self._clock.now())
        if self._accepted:
            return
        self._accepted = True
        self._attempt = 0
        if self._started is not None and not self._started.done():
            self._started.set_result(None)
        self._listener.on_ready()

    def _finish(self, info: CloseInfo) -> None:
        if self.state == "closed" and (self._started is None or self._started.done()):
            return
        self._set_state("closed")
        if self._started is not None and not self._started.done():
            self._started.set_exception(BridgeConnectionError(info))
        self._listener.on_closed(info)
