"""One configured agent: its connection (acceptance, heartbeat, backoff), its sessions, and its events in flight,
each run by an EventRun until its one `reply` or `error`; on a stop, its drain (decision C8)."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timezone
from typing import Any

from ._generated.messages import (
    AgentErrorMessage,
    CancelToAgentMessage,
    ConnectorAgentHealth,
    ErrorToAgentMessage,
    EventToAgentMessage,
    ServiceToAgentMessage,
    parse_service_to_agent,
)
from .backoff import Random, ReconnectPolicy
from .clock import Clock
from .config import AgentSettings
from .connection import BridgeConnection, BridgeConnectionError, CloseInfo, InvalidFrame, Listener, with_query
from .event_run import EventRun
from .fragments import capped
from .handler import AgentEvent, Handler
from .notifications import (
    Closed,
    Connected,
    ConnectorCallbacks,
    Disconnected,
    EventError,
    EventReceived,
    Reconnecting,
    notify,
)
from .sessions import SessionStore

log = logging.getLogger("agent_bridge")

OUTBOX_MAX_FRAMES = 10_000
"""Frames kept for events in flight while the connection is down (sent on reconnect, L8); beyond it they are dropped."""

NOT_STARTED_TEXT = (
    "The agent connector is stopping and did not start this event; it may be sent again once the agent is back."
)
CUT_SHORT_TEXT = "The agent connector is shutting down."


class AgentRunner(Listener[ServiceToAgentMessage]):
    def __init__(
        self,
        *,
        agent: AgentSettings,
        url: str,
        policy: ReconnectPolicy,
        handler: Handler,
        handler_timeout_s: float,
        clock: Clock,
        callbacks: ConnectorCallbacks,
        random: Random | None = None,
        heartbeat_interval_ms: float | None = None,
        heartbeat_timeout_ms: float | None = None,
    ) -> None:
        self.agent_id = agent.agent_id
        self.sessions = SessionStore(agent.ttl_days, agent.context, clock)
        self._handler = handler
        self._timeout_s = handler_timeout_s
        self._clock = clock
        self._callbacks = callbacks
        self._runs: dict[str, EventRun] = {}
        self._outbox: list[dict[str, Any]] = []
        self._accepting = True
        self._idle: asyncio.Future[None] | None = None
        self._last_pong: float | None = None
        self.last_error: str | None = None
        self.connection: BridgeConnection[ServiceToAgentMessage] = BridgeConnection(
            url=with_query(url, cancel="1"),  # told of cancels (S1), whatever the configured URL's query said
            token=agent.token,
            parse=parse_service_to_agent,
            listener=self,
            policy=policy,
            clock=clock,
            random=random,
            heartbeat_interval_ms=heartbeat_interval_ms,
            heartbeat_timeout_ms=heartbeat_timeout_ms,
        )

    async def start(self) -> None:
        """Connects; returns once the bridge has accepted the token, raises when refused for good or out of retries."""
        try:
            await self.connection.start()
        except BridgeConnectionError as err:
            raise RuntimeError(self.last_error or str(err)) from None

    async def drain(self) -> None:
        """Takes no more events (each new one is answered at once with AGENT_ERROR); returns once every event in
        flight has ended. The connection stays open meanwhile, so their frames still reach the bridge."""
        self._accepting = False
        if not self._runs:
            return
        if self._idle is None:
            self._idle = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._idle)

    async def close(self) -> list[str]:
        """Ends every event still in flight with `error` (the app is told), then closes the connection for good.
        Returns the ids of the events so ended."""
        self._accepting = False
        cut_short = list(self._runs)
        for run in list(self._runs.values()):
            run.end("AGENT_ERROR", CUT_SHORT_TEXT)
        await self.connection.close()
        return cut_short

    def health(self) -> ConnectorAgentHealth:
        last_ping = (
            None
            if self._last_pong is None
            else datetime.fromtimestamp(self._last_pong, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        )
        last_error = None if self.is_connected else self.last_error
        return ConnectorAgentHealth(connected=self.is_connected, last_ping=last_ping, last_error=last_error)

    @property
    def is_connected(self) -> bool:
        return self.connection.ready

    @property
    def in_flight(self) -> int:
        return len(self._runs)

    # ---- the connection -------------------------------------------------------------------------------------

    def on_pong(self, at: float) -> None:
        self._last_pong = at

    def on_ready(self) -> None:
        notify(self._callbacks.connected, Connected(self.agent_id))
        self._flush()

    def on_down(self, info: CloseInfo) -> None:
        refusal = self.connection.closing_error
        self.last_error = (
            f"{refusal.code}: {refusal.error}"
            if refusal
            else f"connection closed ({info.code}{' ' + info.reason if info.reason else ''})"
        )
        if self.connection.ready:
            notify(self._callbacks.disconnected, Disconnected(self.agent_id, info.code, info.reason))

    def on_reconnecting(self, attempt: int, delay_ms: float) -> None:
        notify(self._callbacks.reconnecting, Reconnecting(self.agent_id, attempt, delay_ms))

    def on_closed(self, info: CloseInfo) -> None:
        if self._outbox:
            log.warning("agent %s: connection closed for good, %d frame(s) not sent", self.agent_id, len(self._outbox))
        self._outbox = []
        for run in list(self._runs.values()):
            run.abandon("AGENT_OFFLINE", "The connection to the bridge closed for good; the event cannot be answered.")
        notify(self._callbacks.closed, Closed(self.agent_id, info.code, info.reason))

    def send(self, frame: dict[str, Any]) -> None:
        """Sends now, or keeps the frame until the connection is back (in order)."""
        if self.is_connected and not self._outbox and self.connection.send(frame):
            return
        if self.connection.state == "closed":
            log.warning("agent %s: connection closed, %s frame not sent", self.agent_id, frame.get("type"))
            return
        if len(self._outbox) >= OUTBOX_MAX_FRAMES:
            log.warning("agent %s: outbox full while disconnected, %s frame dropped", self.agent_id, frame.get("type"))
            return
        self._outbox.append(frame)
        self._flush()

    def _flush(self) -> None:
        while self.is_connected and self._outbox and self.connection.send(self._outbox[0]):
            self._outbox.pop(0)

    # ---- frames from the bridge -----------------------------------------------------------------------------

    def on_message(self, message: ServiceToAgentMessage) -> None:
        try:
            if isinstance(message, EventToAgentMessage):
                self._on_event(message)
            elif isinstance(message, ErrorToAgentMessage):
                self._on_bridge_error(message.code, message.event_id, message.error)
            elif isinstance(message, CancelToAgentMessage):
                self._on_cancel(message.event_id)
        except Exception:  # one frame must never take the connector down
            log.exception("agent %s: failed to handle a frame from the bridge", self.agent_id)

    def on_invalid(self, frame: InvalidFrame) -> None:
        """A frame off the schema: an event that cannot be read still gets its one `error` (agents never stay
        silent); an error about something is still heard; anything else is logged and ignored."""
        if frame.type == "error":
            self._on_bridge_error(None, frame.event_id, None)
            return
        if frame.type != "event":
            log.warning("agent %s: invalid %s frame from the bridge ignored: %s", self.agent_id, frame.type, frame.problem)
            return
        text = f"The agent connector could not read the event: {frame.problem}"
        if frame.event_id is not None:
            self.send(AgentErrorMessage(event_id=frame.event_id, code="AGENT_ERROR", error=capped(text)).to_json())
        notify(self._callbacks.event_error, EventError(self.agent_id, frame.event_id, "AGENT_ERROR", text))

    def _on_bridge_error(self, code: str | None, event_id: str | None, text: str | None) -> None:
        shown = text if text is not None else f"(no text; code {code})"
        log.warning("agent %s: the bridge reported %s: %s (event %s)", self.agent_id, code, shown, event_id)
        notify(self._callbacks.event_error, EventError(self.agent_id, event_id, str(code), shown))
        # The bridge no longer knows the event (it timed out or ended there): stop it here, without more frames.
        if event_id is not None and code == "INVALID_EVENT_ID":
            run = self._runs.get(event_id)
            if run is not None:
                run.abandon()

    def _on_cancel(self, event_id: str) -> None:
        """The app cancelled the event (S4): its run ends here without a frame, its handler is cancelled, and
        whatever the handler still yields or returns for it is dropped, never sent."""
        run = self._runs.get(event_id)
        if run is None:
            return  # ended already: its reply or error crossed the cancel (S8)
        log.info("agent %s: event %s cancelled by the app", self.agent_id, event_id)
        run.cancel()

    def _on_event(self, m: EventToAgentMessage) -> None:
        if m.event_id in self._runs:
            log.warning("agent %s: event %s already in flight, duplicate ignored", self.agent_id, m.event_id)
            return
        notify(self._callbacks.event_received, EventReceived(self.agent_id, m.event_id, m.session_key))
        run = EventRun(self, m.event_id, self._callbacks)
        if not self._accepting:
            run.end("AGENT_ERROR", NOT_STARTED_TEXT)
            return
        self._runs[m.event_id] = run
        session, created = self.sessions.acquire(m.session_key)
        event = AgentEvent(
            agent_id=self.agent_id,
            event_id=m.event_id,
            app_id=m.app_id,
            thread_id=m.thread_id,
            session_key=m.session_key,
            payload=m.payload,
            session=session,
            new_session=created,
        )
        run.start(self._handler, event, self._timeout_s, self._clock.sleep)

    def forget(self, event_id: str) -> None:
        """Called by a run when it ends."""
        self._runs.pop(event_id, None)
        if not self._runs and self._idle is not None:
            if not self._idle.done():
                self._idle.set_result(None)
            self._idle = None
