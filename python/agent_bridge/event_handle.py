"""One event as the app sees it, from send() to its reply: the handle the caller holds, fed by the AppClient."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Callable

from ._generated.messages import AcceptedMessage, ReplyMessage
from .app_errors import BridgeError


@dataclass(frozen=True)
class Accepted:
    event_id: str
    session_key: str


def _quiet(future: asyncio.Future[Any]) -> None:
    # Marks the exception retrieved: an ignored failure is never "Future exception was never retrieved".
    if not future.cancelled():
        future.exception()


class EventHandle:
    """One event. Every part fails with the same BridgeError when the event fails; none needs to be awaited.

    - `await handle.accepted`: the bridge took the event (an Accepted), or raises its refusal;
    - `async for fragment in handle.fragments`: the token fragments as they arrive, ending after the last one once
      the reply is in, raising the event's error if it fails; each iteration starts from the first fragment;
    - `await handle.reply`: the final ReplyMessage; `await handle.text()`: its full text;
    - `handle.cancel()`: stops the event (the cancel extension, S2).
    """

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self.accepted: asyncio.Future[Accepted] = loop.create_future()
        self.reply: asyncio.Future[ReplyMessage] = loop.create_future()
        self.accepted.add_done_callback(_quiet)
        self.reply.add_done_callback(_quiet)
        self.event_id: str | None = None
        self._fragments: list[str] = []
        self._error: BridgeError | None = None
        self._changed = asyncio.Event()
        self.cancel_pending = False
        """Cancelled before it was accepted: the client cancels it on the bridge when its `accepted` comes."""
        self.on_cancel: Callable[[], None] | None = None
        """What cancel() does: set by the client that sent it."""

    def cancel(self) -> None:
        """Stops the event: `accepted`, `fragments`, `reply` and `text()` end at once with EventCancelledError, and
        the bridge is asked to end it and tell its agent (once the event is accepted, if it is not yet). Nothing
        happens for an event that has already ended."""
        if not self.ended and self.on_cancel is not None:
            self.on_cancel()

    @property
    def fragments(self) -> AsyncIterator[str]:
        return self._iterate()

    async def text(self) -> str:
        return (await self.reply).reply

    @property
    def ended(self) -> bool:
        return self.reply.done()

    # ---- fed by the client ----------------------------------------------------------------------------------

    def accept(self, message: AcceptedMessage) -> None:
        self.event_id = message.event_id
        if not self.accepted.done():
            self.accepted.set_result(Accepted(message.event_id, message.session_key))

    def token(self, fragment: str) -> None:
        if self.ended:
            return
        self._fragments.append(fragment)
        self._wake()

    def finish(self, message: ReplyMessage) -> None:
        if self.ended:
            return
        self.reply.set_result(message)
        self._wake()

    def fail(self, error: BridgeError) -> None:
        if self.ended:
            return
        self._error = error
        if not self.accepted.done():
            self.accepted.set_exception(error)
        self.reply.set_exception(error)
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def _iterate(self) -> AsyncIterator[str]:
        i = 0
        while True:
            if i < len(self._fragments):
                i += 1
                yield self._fragments[i - 1]
                continue
            if self._error is not None:
                raise self._error
            if self.ended:
                return
            await self._changed.wait()
