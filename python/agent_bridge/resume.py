"""The app client's half of the resume extension (spec/protocol.md#R1 to R9): what it keeps of each accepted event
to take it back on a new connection after a drop, and the position that makes every fragment arrive once."""

from __future__ import annotations

from ._generated.messages import ErrorMessage, ResumeMessage
from .app_errors import StreamGapError
from .event_handle import EventHandle

def answers_resume(code: str) -> bool:
    """Whether an error ends a resumed event (R5, R6); no such error ever answers an `event` frame (so no pairing by
    order)."""
    return code == "RESUME_GAP" or code == "RESUME_REFUSED"


class InFlightEvent:
    """One accepted event until its reply or error."""

    def __init__(self, handle: EventHandle, event_id: str, resume_token: str | None) -> None:
        self.handle = handle
        self.event_id = event_id
        self.resume_token = resume_token
        """Only when the bridge has the extension (R1: its `accepted` says so) and the client asked for it."""
        self.last_seq = 0
        self.detached = False
        """Its connection dropped and it waits to be taken back on the next one."""

    @property
    def resumable(self) -> bool:
        return self.resume_token is not None

    def token(self, fragment: str, seq: int | None) -> None:
        """Delivers a fragment unless its position was delivered already (the caller never sees one twice)."""
        if seq is not None:
            if seq <= self.last_seq:
                return
            self.last_seq = seq
        self.handle.token(fragment)

    def resume_frame(self) -> ResumeMessage | None:
        if self.resume_token is None:
            return None
        return ResumeMessage(event_id=self.event_id, resume_token=self.resume_token, after_seq=self.last_seq)

    def gap(self, message: ErrorMessage) -> StreamGapError:
        """The caller's error for the bridge's refusal to give the event back: either way the rest is lost."""
        if message.code == "RESUME_GAP":
            text = f"{message.error} The stream stops after fragment {self.last_seq}; the rest of the answer is lost."
        else:
            text = (
                f"Event {self.event_id}'s stream cannot be completed after fragment {self.last_seq}: "
                f"the bridge refused to resume it ({message.error})"
            )
        return StreamGapError(str(message.code), text, event_id=self.event_id, agent_id=message.agent_id)
