"""The app side of the bridge: one resilient connection to `{base_url}/ws/app`, events sent over it, and their
answers paired back to the caller.

Pairing: the bridge answers every `event` frame with exactly one `accepted` or `error`, in the order the frames
were sent (W7), and a rejection carries a fresh event_id the client has never seen (W6). So the first answer goes
to the oldest send still waiting for one; from then on the event is known by its event_id. `discover` is answered
in order too.

Resuming (R9): the client asks every bridge for resumable streams (`?resume=1`); an event whose `accepted` brought
a resume_token survives a dropped connection: on the next one the client names it with the last position it
received, and the bridge sends the rest. Events without one, and sends not yet accepted, end on a drop.

Cancelling (S1-S8): `handle.cancel()` ends the handle at once and sends `cancel` for its event, at once if it is
accepted, else with its `accepted`. The bridge answers a cancel with `error` CANCELLED or CANCEL_REFUSED naming the
event: neither ever answers a send, and nothing the cancelled event still gets (its late tokens, reply or error)
reaches another one, so the pairing of answers to sends stays right.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from ._generated.errors import ERRORS
from ._generated.limits import APP_RECONNECT_MAX_ATTEMPTS, ENDPOINT_PATHS, FRAME_MAX_BYTES, PAYLOAD_MAX_BYTES
from ._generated.messages import (
    AcceptedMessage,
    AgentsMessage,
    AgentSummary,
    CancelMessage,
    DiscoverMessage,
    ErrorMessage,
    EventMessage,
    ReplyMessage,
    ServiceToAppMessage,
    TokenMessage,
    parse_service_to_app,
)
from .app_errors import BridgeError, ConnectionLostError, EventCancelledError
from .backoff import Random, ReconnectPolicy
from .clock import SYSTEM_CLOCK, Clock
from .connection import BridgeConnection, BridgeConnectionError, Carrier, CloseInfo, InvalidFrame, Listener, with_query
from .event_handle import EventHandle
from .frames import json_bytes
from .resume import InFlightEvent, answers_resume

log = logging.getLogger("agent_bridge")

APP_PATH = ENDPOINT_PATHS["app"][ENDPOINT_PATHS["app"].index("/ws/") :]
"""`/ws/app`: what the client adds to the base URL, which ends in the version segment."""


class DiscoveredAgents(list[AgentSummary]):
    """The agents this app may use; `incomplete` when the bridge cut the list to fit one frame (W13)."""

    incomplete: bool = False


@dataclass
class AppCallbacks:
    """What the client tells its owner, each optional."""

    connected: Callable[[], None] | None = None
    """The bridge accepted the token on a (re)opened connection."""
    disconnected: Callable[[CloseInfo], None] | None = None
    """The connection went down; resumable events wait for the next one, the rest have failed."""
    reconnecting: Callable[[int, float], None] | None = None
    """A reconnect (attempt, delay in ms) is scheduled."""
    closed: Callable[[CloseInfo], None] | None = None
    """Given up for good: closed by you, refused (retry: false) or out of attempts."""


def _call(callback: Callable[..., None] | None, *args: Any) -> None:
    if callback is None:
        return
    try:
        callback(*args)
    except Exception:
        log.exception("an app client callback failed")


@dataclass
class _State:
    awaiting_answer: list[EventHandle] = field(default_factory=list)
    in_flight: dict[str, InFlightEvent] = field(default_factory=dict)
    discovers: list[asyncio.Future[DiscoveredAgents]] = field(default_factory=list)
    resumed_here: set[str] = field(default_factory=set)
    resume_retries: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    cancelled: set[str] = field(default_factory=set)
    """Events this connection cancelled, until the bridge's answer to the cancel: their late frames are ignored."""
    cancel_after_resume: dict[str, InFlightEvent] = field(default_factory=dict)
    """Events cancelled while no connection of this client held them on the bridge (dropped and not yet resumed, or
    their resume refused for the load): a cancel from elsewhere would be refused (S3), so the next connection takes
    each back with a `resume` and cancels it at once, until the bridge's answer ends it."""
    cancel_retries: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    """Those of them whose resume the bridge refused for the load, each waiting for the time it gave."""


class AppClient(Listener[ServiceToAppMessage]):
    """A connected app. Get one from `connect_app`."""

    def __init__(self, resume: bool, callbacks: AppCallbacks, retry_clock: Clock = SYSTEM_CLOCK) -> None:
        self._resume = resume
        self._callbacks = callbacks
        # The waits the bridge asks for (retry_after_seconds) are its own count: real time, never the time scale's.
        self._retry_clock = retry_clock
        self._s = _State()
        self._closing = False
        self._closed = asyncio.get_running_loop().create_future()
        self.connection: BridgeConnection[ServiceToAppMessage]

    @property
    def state(self) -> str:
        return self.connection.state

    def send(self, agent_id: str, thread_id: str, payload: dict[str, Any]) -> EventHandle:
        """Sends one event. Never raises for a runtime condition: when disconnected, the handle fails at once with
        ConnectionLostError (nothing was sent); a frame over the frame limit fails at once with PAYLOAD_TOO_LARGE,
        since the bridge would close the connection instead of answering it."""
        handle = EventHandle()
        handle.on_cancel = lambda: self._cancel(handle, agent_id)
        frame = EventMessage(agent_id=agent_id, thread_id=thread_id, payload=payload).to_json()
        size = json_bytes(frame)
        if size > FRAME_MAX_BYTES:
            handle.fail(
                BridgeError(
                    "PAYLOAD_TOO_LARGE",
                    f"The event is {size} bytes of JSON; payloads are limited to {PAYLOAD_MAX_BYTES} bytes. Not sent.",
                    agent_id=agent_id,
                )
            )
        elif not self.connection.send(frame):
            handle.fail(self._not_connected("send the event"))
        else:
            self._s.awaiting_answer.append(handle)
        return handle

    async def discover(self) -> DiscoveredAgents:
        """The agents this app may use (W13); raises ConnectionLostError if the connection drops first."""
        if not self.connection.send(DiscoverMessage().to_json()):
            raise self._not_connected("discover")
        future: asyncio.Future[DiscoveredAgents] = asyncio.get_running_loop().create_future()
        self._s.discovers.append(future)
        return await future

    async def close(self) -> None:
        """Closes for good; everything still open fails with ConnectionLostError."""
        self._closing = True
        await self.connection.close()

    async def wait_closed(self) -> CloseInfo:
        """Returns once the client has given up for good (see AppCallbacks.closed)."""
        return await asyncio.shield(self._closed)

    # ---- the connection's notifications ---------------------------------------------------------------------

    def on_ready(self) -> None:
        self._resume_detached()  # before anyone hears of it, so the resumes go out ahead of new sends
        for event_id, held in list(self._s.cancel_after_resume.items()):
            self._resume_and_cancel(event_id, held)
        _call(self._callbacks.connected)

    def on_down(self, info: CloseInfo) -> None:
        self._s.cancelled.clear()  # nothing of them comes on another connection
        _cancel_all(self._s.cancel_retries)  # the next connection tries each at once
        self._fail_all(self._lost(info), keep_resumable=not self._closing)
        _call(self._callbacks.disconnected, info)

    def on_reconnecting(self, attempt: int, delay_ms: float) -> None:
        _call(self._callbacks.reconnecting, attempt, delay_ms)

    def on_closed(self, info: CloseInfo) -> None:
        _cancel_all(self._s.cancel_retries)
        self._s.cancel_after_resume.clear()
        self._fail_all(self._lost(info))
        if not self._closed.done():
            self._closed.set_result(info)
        _call(self._callbacks.closed, info)

    def on_message(self, message: ServiceToAppMessage) -> None:
        s = self._s
        if isinstance(message, AcceptedMessage):
            if not s.awaiting_answer:
                return
            handle = s.awaiting_answer.pop(0)
            handle.accept(message)
            if handle.cancel_pending:
                self._send_cancel(message.event_id)
                return
            token = message.resume_token if self._resume else None
            s.in_flight[message.event_id] = InFlightEvent(handle, message.event_id, token)
        elif isinstance(message, TokenMessage):
            s.resumed_here.discard(message.event_id)
            event = s.in_flight.get(message.event_id)
            if event is not None:
                event.token(message.token, message.seq)
        elif isinstance(message, ReplyMessage):
            s.resumed_here.discard(message.event_id)
            ended = s.in_flight.pop(message.event_id, None)
            if ended is not None:
                ended.handle.finish(message)
        elif isinstance(message, ErrorMessage):
            self._on_error(message)
        elif isinstance(message, AgentsMessage):
            if s.discovers:
                agents = DiscoveredAgents(message.agents)
                agents.incomplete = message.incomplete is True
                _resolve(s.discovers.pop(0), agents)

    def _on_error(self, message: ErrorMessage) -> None:
        s = self._s
        if message.event_id is None:
            # A connection error announcing the close (the connection keeps it), or an error about a frame: our
            # frames never earn one but a `resume` sent to a bridge without the extension.
            if message.code == "INVALID_MESSAGE":
                self._resumes_not_understood(message.error)
            if message.code == "TOO_MANY_REQUESTS" and s.discovers:
                _reject(s.discovers.pop(0), BridgeError.from_message(message))
            return
        s.resumed_here.discard(message.event_id)
        if message.event_id in s.cancel_after_resume:
            self._answered_after_resume(message.event_id, message)
            return
        # The answer to a cancel never answers a send; an event cancelled here has nothing more to say (S2, S8).
        if message.code == "CANCELLED" or message.code == "CANCEL_REFUSED":
            s.cancelled.discard(message.event_id)
            if message.code == "CANCELLED" and message.event_id in s.in_flight:
                self._end(message.event_id, EventCancelledError(message.event_id, message.agent_id))
            return
        if message.event_id in s.cancelled:
            return
        event = s.in_flight.get(message.event_id)
        if message.code == "TOO_MANY_REQUESTS":
            # A resume refused for the load: never an event's end nor an answer to a send; taken back later.
            if event is not None:
                retry = message.metadata.retry_after_seconds if message.metadata else 1.0
                self._resume_later(event, retry)
            return
        if answers_resume(message.code):
            if event is not None:
                self._end(message.event_id, event.gap(message))
            return
        error = BridgeError.from_message(message)
        if event is not None:
            self._end(message.event_id, error)
        elif s.awaiting_answer:
            s.awaiting_answer.pop(0).fail(error)  # an id never seen: the rejection of the oldest send (W6, W7)

    def on_invalid(self, frame: InvalidFrame) -> None:
        """A frame off the schema still answers something: the call it answers fails with PROTOCOL_ERROR, so the
        pairing of later answers stays in step."""
        kind = frame.type or "message"
        error = BridgeError("PROTOCOL_ERROR", f"The bridge sent an invalid {kind}: {frame.problem}.", event_id=frame.event_id)
        event = self._s.in_flight.get(frame.event_id) if frame.event_id else None
        if event is not None:
            self._end(event.event_id, error)
        elif kind == "accepted" or (kind == "error" and frame.event_id is not None):
            if self._s.awaiting_answer:
                self._s.awaiting_answer.pop(0).fail(error)
        elif kind == "agents" and self._s.discovers:
            _reject(self._s.discovers.pop(0), error)

    # ---- cancels ------------------------------------------------------------------------------------------

    def _cancel(self, handle: EventHandle, agent_id: str) -> None:
        """The caller cancels the event (S2): it ends for the caller now, and the bridge is asked to end it (at once
        if it is accepted, else with its `accepted`). An event waiting to be resumed is cancelled by the connection
        that takes it back: the bridge refuses a cancel from a connection that does not hold the event (S3)."""
        s = self._s
        event_id = handle.event_id
        held = s.in_flight.get(event_id) if event_id is not None else None
        if event_id is None:
            handle.cancel_pending = True
        elif held is not None and held.handle is handle:
            del s.in_flight[event_id]
            s.resumed_here.discard(event_id)
            retrying = s.resume_retries.pop(event_id, None)
            if retrying is not None:
                retrying.cancel()
            if not held.detached and retrying is None:
                self._send_cancel(event_id)
            elif held.resume_frame() is not None:
                s.cancel_after_resume[event_id] = held
                if not held.detached:
                    self._resume_and_cancel(event_id, held)
        handle.fail(EventCancelledError(event_id, agent_id))

    def _send_cancel(self, event_id: str) -> None:
        if self.connection.send(CancelMessage(event_id=event_id).to_json()):
            self._s.cancelled.add(event_id)

    def _resume_and_cancel(self, event_id: str, held: InFlightEvent) -> None:
        """Takes a cancelled event back on this connection and cancels it there: the bridge judges both in order."""
        frame = held.resume_frame()
        if frame is not None and self.connection.send(frame.to_json()):
            self._send_cancel(event_id)

    def _answered_after_resume(self, event_id: str, message: ErrorMessage) -> None:
        """The bridge's answer about an event cancelled while not held: a resume refused for the load is tried again
        after the time given (the cancel that followed it is refused meanwhile); anything else ends it: CANCELLED, a
        gap (it ended or cannot be had), or CANCEL_REFUSED after a reply that came first (S8)."""
        s = self._s
        if message.code == "TOO_MANY_REQUESTS":

            def again() -> None:
                held = s.cancel_after_resume.get(event_id)
                if held is not None:
                    self._resume_and_cancel(event_id, held)

            seconds = message.metadata.retry_after_seconds if message.metadata else 1.0
            self._retry_after(s.cancel_retries, event_id, seconds, again)
            return
        s.cancelled.discard(event_id)
        if message.code == "CANCEL_REFUSED" and event_id in s.cancel_retries:
            return
        s.cancel_after_resume.pop(event_id, None)

    # ---- events in flight -----------------------------------------------------------------------------------

    def _end(self, event_id: str, error: BridgeError) -> None:
        event = self._s.in_flight.pop(event_id, None)
        if event is not None:
            event.handle.fail(error)

    def _fail_all(self, error: BridgeError, *, keep_resumable: bool = False) -> None:
        s = self._s
        _cancel_all(s.resume_retries)  # the next connection resumes them, if any
        for handle in s.awaiting_answer:
            handle.fail(error)
        s.awaiting_answer.clear()
        for event_id, event in list(s.in_flight.items()):
            if keep_resumable and event.resumable:
                event.detached = True
            else:
                self._end(event_id, error)
        for future in s.discovers:
            _reject(future, error)
        s.discovers.clear()

    def _resume_detached(self) -> None:
        """Takes back, on the connection just accepted, every event whose connection dropped (R4)."""
        self._s.resumed_here.clear()
        for event_id, event in self._s.in_flight.items():
            frame = event.resume_frame() if event.detached else None
            if frame is not None and self.connection.send(frame.to_json()):
                event.detached = False
                self._s.resumed_here.add(event_id)

    def _resume_later(self, event: InFlightEvent, seconds: float) -> None:
        """Sends the event's resume again after `seconds` (real time: the bridge's own count), or on the next
        connection if none is open then."""

        def again() -> None:
            if self._s.in_flight.get(event.event_id) is not event:
                return
            frame = event.resume_frame()
            if frame is not None and self.connection.send(frame.to_json()):
                self._s.resumed_here.add(event.event_id)
            else:
                event.detached = True

        self._retry_after(self._s.resume_retries, event.event_id, seconds, again)

    def _retry_after(
        self, tasks: dict[str, asyncio.Task[None]], event_id: str, seconds: float, action: Callable[[], None]
    ) -> None:
        """Runs `action` once `seconds` have passed on the retry clock (a wait the bridge asked for), in place of
        the task `tasks` holds for `event_id`; the task is let go when it has run."""
        old = tasks.pop(event_id, None)
        if old is not None:
            old.cancel()

        async def later() -> None:
            await self._retry_clock.sleep(seconds)
            tasks.pop(event_id, None)
            action()

        tasks[event_id] = asyncio.create_task(later())

    def _resumes_not_understood(self, why: str) -> None:
        """The bridge answered a `resume` as an unknown message: it has no resume extension, so none of the events
        resumed on it will come back, and waiting for them would wait for ever (never silent)."""
        for event_id in list(self._s.resumed_here):
            self._end(
                event_id,
                ConnectionLostError(
                    f"The connection to the bridge was lost, and the bridge reached again does not resume streams "
                    f"(it answered: {why}); the rest of event {event_id} is lost."
                ),
            )
        self._s.resumed_here.clear()

    def _lost(self, info: CloseInfo, what: str | None = None) -> ConnectionLostError:
        what = what or ("The client was closed" if self._closing else "The connection to the bridge was lost")
        frame = self.connection.closing_error
        why = f": {frame.code}: {frame.error}" if frame else f": {info.reason}" if info.reason else ""
        return ConnectionLostError(
            f"{what} (close {info.code}{why}); the outcome of any unanswered call is unknown.",
            close_code=info.code,
            reason=info.reason,
        )

    def _not_connected(self, what: str) -> ConnectionLostError:
        state = self.connection.state
        how = "closed" if state == "closed" else f"not connected ({state})"
        return ConnectionLostError(f"Cannot {what}: the client is {how}. Nothing was sent.")

    def refusal(self, info: CloseInfo) -> BridgeError:
        """What a connection that closed before it was accepted means to connect_app."""
        if info.reason in ERRORS:
            frame = self.connection.closing_error
            text = frame.error if frame and frame.code == info.reason else f"The bridge refused the connection: {info.reason}."
            return BridgeError(info.reason, text, close_code=info.code)
        return self._lost(info, "Could not connect to the bridge")


def _cancel_all(tasks: dict[str, asyncio.Task[None]]) -> None:
    for task in tasks.values():
        task.cancel()
    tasks.clear()


def _resolve(future: asyncio.Future[DiscoveredAgents], value: DiscoveredAgents) -> None:
    if not future.done():
        future.set_result(value)


def _reject(future: asyncio.Future[DiscoveredAgents], error: BridgeError) -> None:
    if not future.done():
        future.set_exception(error)


def app_endpoint(base_url: str, resume: bool) -> str:
    """`{base}/ws/app`, keeping any query the caller put on the base URL but `resume`, which the option decides."""
    path_end = base_url.find("?")
    base, query = (base_url, "") if path_end < 0 else (base_url[:path_end], base_url[path_end:])
    return with_query(base.rstrip("/") + APP_PATH + query, resume="1" if resume else None)


async def connect_app(
    url: str,
    token: str,
    *,
    resume: bool = True,
    reconnect: ReconnectPolicy | None = None,
    clock: Clock = SYSTEM_CLOCK,
    random: Random | None = None,
    carrier: Carrier = "header",
    callbacks: AppCallbacks | None = None,
    heartbeat_interval_ms: float | None = None,
    heartbeat_timeout_ms: float | None = None,
) -> AppClient:
    """Connects an app to the bridge at `url` (its base URL, ending in `/v1`) and returns once the token is
    accepted. A refused handshake raises BridgeError (UNAUTHORIZED, TOKEN_REVOKED, FORBIDDEN; `close_code` 44xx)
    without retrying; a bridge that cannot be reached is retried with the reconnect policy first (by default the
    protocol's 10 attempts) and raises ConnectionLostError when that gives up."""
    client = AppClient(resume, callbacks or AppCallbacks())
    client.connection = BridgeConnection(
        url=app_endpoint(url, resume),
        token=token,
        parse=parse_service_to_app,
        listener=client,
        policy=reconnect or ReconnectPolicy(max_retries=APP_RECONNECT_MAX_ATTEMPTS),
        clock=clock,
        random=random,
        carrier=carrier,
        heartbeat_interval_ms=heartbeat_interval_ms,
        heartbeat_timeout_ms=heartbeat_timeout_ms,
    )
    try:
        await client.connection.start()
    except BridgeConnectionError as err:
        raise client.refusal(CloseInfo(err.close_code, err.reason)) from None
    return client
