"""The connector's local notifications (spec/protocol.md#connector-notifications), as callbacks: connected,
disconnected, reconnecting (with the attempt), event received (agent, event, session key), event replied (with the
number of fragments), event error; and, beyond §6.5, event cancelled (the app cancelled an event, S4), closed (an
agent's connection given up for good) and stopped."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, TypeVar

log = logging.getLogger("agent_bridge")


@dataclass(frozen=True)
class Connected:
    agent_id: str


@dataclass(frozen=True)
class Disconnected:
    agent_id: str
    code: int
    """The WebSocket close code (1006 for a dropped connection, 4401 for UNAUTHORIZED…)."""
    reason: str


@dataclass(frozen=True)
class Reconnecting:
    agent_id: str
    attempt: int
    """1-based."""
    delay_ms: float


@dataclass(frozen=True)
class EventReceived:
    agent_id: str
    event_id: str
    session_key: str


@dataclass(frozen=True)
class EventReplied:
    agent_id: str
    event_id: str
    token_count: int
    """The `token` messages sent for the event."""


@dataclass(frozen=True)
class EventError:
    agent_id: str
    event_id: str | None
    """None for an error that named no event."""
    code: str
    message: str


@dataclass(frozen=True)
class EventCancelled:
    """The app cancelled the event (S4): its handler was cancelled, and nothing more is sent for it."""

    agent_id: str
    event_id: str


@dataclass(frozen=True)
class Closed:
    agent_id: str
    code: int
    reason: str


@dataclass(frozen=True)
class CutShort:
    agent_id: str
    event_id: str


@dataclass(frozen=True)
class Stopped:
    cut_short: tuple[CutShort, ...]
    """The events the stop ended early with AGENT_ERROR; empty when all finished within the drain (decision C8)."""


N = TypeVar("N")
Callback = Callable[[N], None] | None


@dataclass
class ConnectorCallbacks:
    """Each optional; a callback that raises is logged, never breaks the connector."""

    connected: Callback[Connected] = None
    disconnected: Callback[Disconnected] = None
    reconnecting: Callback[Reconnecting] = None
    event_received: Callback[EventReceived] = None
    event_replied: Callback[EventReplied] = None
    event_error: Callback[EventError] = None
    event_cancelled: Callback[EventCancelled] = None
    closed: Callback[Closed] = None
    stopped: Callback[Stopped] = None


def notify(callback: Callable[[N], None] | None, notification: N) -> None:
    if callback is None:
        return
    try:
        callback(notification)
    except Exception:
        log.exception("a notification callback failed (%s)", type(notification).__name__)
