"""The errors an app client raises: the bridge's own codes (the generated catalogue), the two failures only the
client can see, because the bridge never had the chance to report them, and the caller's own cancel."""

from __future__ import annotations

from typing import Literal

from ._generated.errors import ErrorCode
from ._generated.messages import ErrorMessage

ClientErrorCode = Literal["CONNECTION_LOST", "PROTOCOL_ERROR"]
"""CONNECTION_LOST: the connection went before the answer came (whether the event reached the agent is unknown).
PROTOCOL_ERROR: the bridge sent a frame that breaks the schema; the answer it carried is lost."""

BridgeErrorCode = ErrorCode | ClientErrorCode


class BridgeError(Exception):
    """Any failure of an app client call; `code` says which, `event_id` lets you quote the bridge's event log."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        event_id: str | None = None,
        agent_id: str | None = None,
        retry_after_seconds: float | None = None,
        close_code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.event_id = event_id
        self.agent_id = agent_id
        self.retry_after_seconds = retry_after_seconds
        self.close_code = close_code

    @classmethod
    def from_message(cls, message: ErrorMessage) -> BridgeError:
        return cls(
            str(message.code),
            message.error,
            event_id=message.event_id,
            agent_id=message.agent_id,
            retry_after_seconds=message.metadata.retry_after_seconds if message.metadata else None,
        )


class ConnectionLostError(BridgeError):
    """The connection went away with the call still open (or was not up when it was made)."""

    def __init__(self, message: str, *, close_code: int | None = None, reason: str = "") -> None:
        super().__init__("CONNECTION_LOST", message, close_code=close_code)
        self.reason = reason
        """The close reason (the bridge puts its code there, such as HEARTBEAT_TIMEOUT); "" when none."""


class StreamGapError(BridgeError):
    """A resumed event whose stream can no longer be completed (RESUME_GAP or RESUME_REFUSED, decisions R5, R6): the
    fragments delivered before it are only the start of the answer."""


class EventCancelledError(BridgeError):
    """The caller cancelled the event (`handle.cancel()`, the cancel extension S2): code CANCELLED, its `event_id`
    (None when it was cancelled before the bridge accepted it). A class of its own so that a Stop button's own doing
    is not mistaken for a failure."""

    def __init__(self, event_id: str | None, agent_id: str | None = None) -> None:
        super().__init__(
            "CANCELLED",
            f"Event {event_id} was cancelled." if event_id else "The event was cancelled before it was accepted.",
            event_id=event_id,
            agent_id=agent_id,
        )
