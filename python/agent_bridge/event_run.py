"""One event handed to an agent's handler, and the guarantee that it ends with exactly one `reply` or `error` on
the wire (spec/protocol.md#never-silent), whatever the handler does: returns, raises, hangs or is stopped."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, cast

from ._generated.errors import ERROR_MESSAGES
from ._generated.limits import FRAME_MAX_BYTES, REPLY_CONTENT_MAX_BYTES
from ._generated.messages import AgentErrorMessage, AgentReplyMessage, AgentReplyMetadata, AgentTokenMessage
from .fragments import capped, split_by_bytes
from .frames import json_bytes
from .handler import AgentEvent, AgentFailure, Handler, Reply
from .notifications import ConnectorCallbacks, EventCancelled, EventError, EventReplied, notify

log = logging.getLogger("agent_bridge")

HANDLER_FAILED = "The agent failed while handling the event."
"""What the app reads when the handler raises (decision C6): an exception's text can carry anything (a stack detail,
a key, a customer's data), so it goes to the connector's log only."""
NO_REPLY = "The agent handler returned without a reply."
Sleep = Callable[[float], Awaitable[None]]
_CODE = re.compile(r"[A-Z][A-Z0-9_]*")


class RunHost(Protocol):
    """What a run needs of the agent it belongs to."""

    agent_id: str

    def send(self, frame: dict[str, Any]) -> None: ...

    def forget(self, event_id: str) -> None: ...


class EventRun:
    """One event in flight, from its handler's start to its one reply or error."""

    def __init__(self, host: RunHost, event_id: str, callbacks: ConnectorCallbacks) -> None:
        self._host = host
        self.event_id = event_id
        self._callbacks = callbacks
        self.finished = False
        self.token_count = 0
        self._work: asyncio.Task[None] | None = None
        self._timer: asyncio.Task[None] | None = None
        self._event: AgentEvent | None = None

    def start(self, handler: Handler, event: AgentEvent, timeout_s: float, sleep: Sleep) -> None:
        self._event = event
        self._work = asyncio.create_task(self._drive(handler, event))
        self._timer = asyncio.create_task(self._time_out(timeout_s, sleep))

    async def _time_out(self, timeout_s: float, sleep: Sleep) -> None:
        await sleep(timeout_s)
        self._timer = None
        self.end("AGENT_TIMEOUT", f"The agent did not answer within {round(timeout_s * 1000)} ms.")

    async def _drive(self, handler: Handler, event: AgentEvent) -> None:
        try:
            result = handler(event)
            if hasattr(result, "__aiter__"):
                outcome: object = None
                stream = cast(AsyncIterator[object], result)
                try:
                    async for item in stream:
                        if self.finished:
                            break
                        if isinstance(item, Reply):
                            outcome = item
                            break
                        self.tokens(str(item))
                finally:
                    close = getattr(stream, "aclose", None)
                    if close is not None:
                        await close()
            else:
                outcome = await cast(Any, result)
        except asyncio.CancelledError:
            raise
        except AgentFailure as failure:
            self.end(failure.code, failure.message)
            return
        except Exception as err:  # noqa: BLE001 - every failure ends the event, never silence
            if self.finished:
                log.warning("handler of event %s failed after the event ended: %r", self.event_id, err)
                return
            log.error("handler failed: %s (agent %s, event %s)", err, self._host.agent_id, self.event_id, exc_info=err)
            self.end("AGENT_ERROR", HANDLER_FAILED)
            return
        if isinstance(outcome, Reply):
            self.reply(outcome.content, outcome.metadata)
        elif isinstance(outcome, str):
            self.reply(outcome, None)
        elif self.token_count > 0:
            self.reply("", None)
        else:
            self.end("AGENT_ERROR", NO_REPLY)

    def tokens(self, text: str) -> int:
        """Sends `text` as one `token`, or several when it is over the fragment limit."""
        if self.finished:
            return 0
        pieces = split_by_bytes(text)
        for piece in pieces:
            self._host.send(AgentTokenMessage(event_id=self.event_id, token=piece).to_json())
            self.token_count += 1
        return len(pieces)

    def reply(self, content: str, metadata: AgentReplyMetadata | None) -> None:
        if self.finished:
            return
        frame = AgentReplyMessage(event_id=self.event_id, content=content, metadata=metadata).to_json()
        # A reply reaches the app in one frame, so its text has a limit (L16): over it the bridge would answer
        # REPLY_TOO_LARGE (or close the connection), so the event ends here with the reason.
        text_bytes = json_bytes(content) - 2
        if text_bytes > REPLY_CONTENT_MAX_BYTES:
            self.end(
                "AGENT_ERROR",
                f"The agent's reply is {text_bytes} bytes; one reply carries at most {REPLY_CONTENT_MAX_BYTES}.",
            )
            return
        if json_bytes(frame) > FRAME_MAX_BYTES:
            self.end(
                "AGENT_ERROR",
                f"The agent's reply frame is over {FRAME_MAX_BYTES} bytes (its metadata is too large) and could not be sent.",
            )
            return
        self._host.send(frame)
        self._finish()
        notify(self._callbacks.event_replied, EventReplied(self._host.agent_id, self.event_id, self.token_count))

    def end(self, code: str, message: str) -> None:
        """Ends the event with `error` (unless it has ended already)."""
        if self.finished:
            return
        if not _CODE.fullmatch(code):
            log.warning("invalid error code %r from the handler of event %s: sent as AGENT_ERROR", code, self.event_id)
            code = "AGENT_ERROR"
        text = capped(message)
        self._host.send(AgentErrorMessage(event_id=self.event_id, code=code, error=text).to_json())
        self._finish()
        notify(self._callbacks.event_error, EventError(self._host.agent_id, self.event_id, code, text))

    def cancel(self) -> None:
        """The app cancelled the event (S4): it ends here without a frame (the bridge has ended it and drops any),
        `event.cancelled` is set, and the handler's task is cancelled: CancelledError at its next await. A handler
        that swallows it and goes on is silenced all the same: every later fragment or answer is dropped here."""
        if self.finished:
            return
        if self._event is not None:
            self._event.cancelled.set()
        self._finish(ERROR_MESSAGES["CANCELLED"]["by_app"].format(event_id=self.event_id))
        notify(self._callbacks.event_cancelled, EventCancelled(self._host.agent_id, self.event_id))

    def abandon(self, code: str | None = None, message: str = "") -> None:
        """Ends the event here without sending anything (the bridge has ended it, or cannot be reached)."""
        if self.finished:
            return
        self._finish()
        if code is not None:
            notify(self._callbacks.event_error, EventError(self._host.agent_id, self.event_id, code, message))

    def _finish(self, why: str | None = None) -> None:
        self.finished = True
        self._host.forget(self.event_id)
        current = asyncio.current_task()
        for task in (self._work, self._timer):
            if task is not None and task is not current and not task.done():
                task.cancel(why)
