"""What an agent runtime implements: one async handler per event.

A handler is either an async generator that yields the answer's fragments, or a coroutine that returns the answer:

    async def handle(event: AgentEvent) -> AsyncIterator[str]:
        yield "Hello, "
        yield event.payload.get("name", "you")

    async def handle(event: AgentEvent) -> str:
        return "Hello"

Each yielded string is sent as one `token` (several when it is over the fragment limit, cut between characters).
The event then ends with exactly one `reply` or `error` (spec/protocol.md#never-silent):
- a generator that ends, or a coroutine that returns None: `reply` with empty content (the bridge joins the
  fragments); with no fragment at all, `error` AGENT_ERROR;
- a returned (or last yielded) `Reply`: that reply, with its content and metadata; a returned string: its content;
- `raise AgentFailure(code, message)`: `error` with that code and text (meant for the app);
- any other exception: `error` AGENT_ERROR with a fixed text; the exception goes to the log only (decision C6);
- no end within the handler timeout: `error` AGENT_TIMEOUT;
- the app cancels the event (the cancel extension, S4): nothing more; the handler's task is cancelled (so
  `asyncio.CancelledError` is raised at its next await), `event.cancelled` is set, and whatever it still yields or
  returns is not sent: the bridge has already ended the event.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Union

from ._generated.messages import AgentReplyMetadata
from .sessions import AgentSession


@dataclass(frozen=True)
class AgentEvent:
    """One event from the bridge, as the handler sees it."""

    agent_id: str
    """The configured agent this event was sent to."""
    event_id: str
    app_id: str
    thread_id: str
    session_key: str
    """`svc:{app_id}:{thread_id}`."""
    payload: Mapping[str, Any]
    """The app's opaque payload, as sent."""
    session: AgentSession
    """The runtime session of `session_key` (new on a thread's first event and after the agent's TTL)."""
    new_session: bool
    cancelled: asyncio.Event = field(default_factory=asyncio.Event, compare=False)
    """Set when the app cancels the event (S4), for a handler that would rather look than be interrupted: its task is
    cancelled at the same moment, and nothing it yields or returns afterwards is sent."""


@dataclass(frozen=True)
class Reply:
    """The event's final answer: `content` may be empty when the text was streamed as fragments."""

    content: str = ""
    metadata: AgentReplyMetadata | None = None


class AgentFailure(Exception):
    """Raised by a handler to end its event with `error` `code` and `message`, both sent to the app as given:
    AGENT_TIMEOUT reaches the app as AGENT_TIMEOUT, any other code as AGENT_ERROR with the text (decision W9)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


Fragment = Union[str, Reply]
HandlerResult = Union[AsyncIterator[Fragment], Awaitable[Union[str, Reply, None]]]
Handler = Callable[[AgentEvent], HandlerResult]
