"""Session mapping (spec/protocol.md §2.5): the bridge sends `svc:{app_id}:{thread_id}`; the connector keeps one
runtime session per key, created with a deep copy of the agent's `context`, reused while it is younger than the
agent's `ttl_days`, and replaced by a fresh one at the first event after that. Sessions live in memory."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .clock import Clock

DAY_S = 86_400.0
SWEEP_EVERY_S = 3_600.0
"""Expired sessions are swept at most this often (on a lookup), so memory stays bounded without a timer."""


@dataclass
class AgentSession:
    key: str
    """The bridge's session key, `svc:{app_id}:{thread_id}`."""
    context: dict[str, Any]
    """A deep copy of the agent's configured `context`, taken when the session was created."""
    created_at: float
    expires_at: float
    """Wall time (seconds) from which the next event gets a new session."""
    data: dict[str, Any] = field(default_factory=dict)
    """The handler's own conversation state."""


class SessionStore:
    def __init__(self, ttl_days: float, context: Mapping[str, Any], clock: Clock) -> None:
        if not ttl_days > 0:
            raise ValueError(f"ttl_days must be positive, got {ttl_days}")
        self._ttl_s = ttl_days * DAY_S
        self._context = context
        self._clock = clock
        self._sessions: dict[str, AgentSession] = {}
        self._last_sweep = clock.monotonic()

    def acquire(self, key: str) -> tuple[AgentSession, bool]:
        """The live session of `key`, or a new one (second value True) when there is none or it has expired."""
        now = self._clock.now()
        if self._clock.monotonic() - self._last_sweep >= SWEEP_EVERY_S:
            self.sweep()
        existing = self._sessions.get(key)
        if existing is not None and now < existing.expires_at:
            return existing, False
        session = AgentSession(key, copy.deepcopy(dict(self._context)), now, now + self._ttl_s)
        self._sessions[key] = session
        return session, True

    def get(self, key: str) -> AgentSession | None:
        session = self._sessions.get(key)
        return session if session is not None and self._clock.now() < session.expires_at else None

    def sweep(self) -> int:
        """Deletes every expired session; returns how many."""
        now = self._clock.now()
        self._last_sweep = self._clock.monotonic()
        expired = [key for key, s in self._sessions.items() if now >= s.expires_at]
        for key in expired:
            del self._sessions[key]
        return len(expired)

    def __len__(self) -> int:
        return len(self._sessions)
