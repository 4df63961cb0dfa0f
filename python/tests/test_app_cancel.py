"""The app client's cancel (S1-S8): `handle.cancel()` ends the handle at once and asks the bridge to end the event;
the bridge's answers to the cancel and the event's late frames never reach another send, whichever way it goes."""

import asyncio
import unittest
from typing import Any, cast

import _path  # noqa: F401

from agent_bridge import AppCallbacks, AppClient, BridgeError, CloseInfo, EventCancelledError, EventHandle
from agent_bridge._generated.messages import parse_service_to_app

AGENT = "tutor"
SESSION = "svc:org-1:app-1:t"
RT = "r" * 43


class FakeConnection:
    """The frames the client sends, and whether a socket is open to send them on."""

    def __init__(self) -> None:
        self.state = "open"
        self.closing_error = None
        self.sent: list[dict[str, Any]] = []

    def send(self, frame: dict[str, Any]) -> bool:
        if self.state != "open":
            return False
        self.sent.append(frame)
        return True


class ManualClock:
    """Time that passes only when the test says: each sleep ends once `advance` has moved past its end."""

    def __init__(self) -> None:
        self.t = 0.0
        self.sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def now(self) -> float:
        return self.t

    def monotonic(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.sleepers.append((self.t + seconds, future))
        await future

    async def advance(self, seconds: float) -> None:
        await asyncio.sleep(0)  # the tasks just made reach their sleep first
        self.t += seconds
        for end, future in self.sleepers:
            if end <= self.t and not future.done():
                future.set_result(None)
        for _ in range(3):  # the woken tasks run to their next wait
            await asyncio.sleep(0)


class Bridge:
    """The client under test, and the bridge's side of its connection."""

    def __init__(self, resume: bool = True) -> None:
        self.clock = ManualClock()
        self.client = AppClient(resume, AppCallbacks(), retry_clock=self.clock)
        self.connection = FakeConnection()
        self.client.connection = cast(Any, self.connection)

    def send(self, thread: str = "t") -> EventHandle:
        return self.client.send(AGENT, thread, {"text": "hi"})

    def answer(self, **fields: Any) -> None:
        self.client.on_message(parse_service_to_app(fields))

    def accepted(self, event_id: str, resume_token: str | None = None) -> None:
        extra = {} if resume_token is None else {"resume_token": resume_token}
        self.answer(type="accepted", event_id=event_id, agent_id=AGENT, session_key=SESSION, status="accepted", **extra)

    def token(self, event_id: str, text: str, seq: int | None = None) -> None:
        extra = {} if seq is None else {"seq": seq}
        self.answer(type="token", event_id=event_id, agent_id=AGENT, token=text, **extra)

    def reply(self, event_id: str, text: str = "done") -> None:
        metadata = {"tokens_used": 1, "model": "m", "latency_ms": 5, "session_key": SESSION}
        self.answer(type="reply", event_id=event_id, agent_id=AGENT, thread_id="t", reply=text, payload={}, metadata=metadata)

    def error(self, code: str, event_id: str | None = None, text: str = "no") -> None:
        fields: dict[str, Any] = {"type": "error", "code": code, "error": text}
        if event_id is not None:
            fields.update(event_id=event_id, agent_id=AGENT)
        self.answer(**fields)

    def cancels(self) -> list[str]:
        return [f["event_id"] for f in self.connection.sent if f["type"] == "cancel"]

    def drop(self) -> None:
        self.connection.state = "reconnecting"
        self.client.on_down(CloseInfo(1006, ""))

    def reconnect(self) -> None:
        self.connection.state = "open"
        self.connection.sent.clear()
        self.client.on_ready()


async def failure(awaitable: Any) -> BaseException:
    try:
        await awaitable
    except BaseException as err:  # noqa: BLE001 - what the test looks at
        return err
    raise AssertionError("did not fail")


async def fragments(handle: EventHandle) -> tuple[list[str], BaseException | None]:
    read: list[str] = []
    try:
        async for fragment in handle.fragments:
            read.append(fragment)
    except BridgeError as err:
        return read, err
    return read, None


class AppCancelTest(unittest.IsolatedAsyncioTestCase):
    async def test_an_accepted_event_ends_at_once_and_its_cancel_is_sent(self) -> None:
        bridge = Bridge()
        handle = bridge.send()
        bridge.accepted("ev1")
        bridge.token("ev1", "Hel")
        handle.cancel()

        self.assertEqual(bridge.cancels(), ["ev1"])
        err = await failure(handle.reply)
        self.assertIsInstance(err, EventCancelledError)
        self.assertEqual((cast(BridgeError, err).code, cast(BridgeError, err).event_id, cast(BridgeError, err).agent_id), ("CANCELLED", "ev1", AGENT))
        self.assertIs(await failure(handle.text()), err)
        self.assertEqual(await fragments(handle), (["Hel"], err))
        handle.cancel()  # once ended, nothing more is sent
        self.assertEqual(bridge.cancels(), ["ev1"])

    async def test_late_frames_and_the_answer_to_the_cancel_never_reach_another_send(self) -> None:
        bridge = Bridge()
        first = bridge.send()
        bridge.accepted("ev1")
        first.cancel()
        second = bridge.send()  # waits for its `accepted`: the oldest send still waiting for an answer
        bridge.token("ev1", "late")
        bridge.error("AGENT_ERROR", "ev1")  # the agent's late error, which the bridge sent before the cancel came
        bridge.error("CANCELLED", "ev1")
        self.assertFalse(second.accepted.done())
        bridge.accepted("ev2")
        bridge.token("ev2", "ok")
        bridge.reply("ev2", "ok")
        self.assertEqual((await second.accepted).event_id, "ev2")
        self.assertEqual(await second.text(), "ok")
        self.assertEqual(await fragments(second), (["ok"], None))
        self.assertIsInstance(await failure(first.reply), EventCancelledError)

    async def test_an_event_not_yet_accepted_is_cancelled_with_its_accepted(self) -> None:
        bridge = Bridge()
        first = bridge.send()
        second = bridge.send()
        first.cancel()
        err = await failure(first.accepted)
        self.assertIsInstance(err, EventCancelledError)
        self.assertIsNone(cast(BridgeError, err).event_id)
        self.assertEqual(bridge.cancels(), [])  # no id to name yet

        bridge.accepted("ev1")  # the first answer is still the first send's
        self.assertEqual(bridge.cancels(), ["ev1"])
        bridge.accepted("ev2")
        bridge.token("ev1", "late")
        bridge.error("CANCELLED", "ev1")
        bridge.reply("ev2", "second")
        self.assertEqual(await second.text(), "second")

    async def test_a_send_cancelled_then_refused_sends_no_cancel(self) -> None:
        bridge = Bridge()
        first = bridge.send()
        second = bridge.send()
        first.cancel()
        bridge.error("AGENT_OFFLINE", "ev-rejected")  # the refusal of the first send (W6, W7), not the second's
        bridge.accepted("ev2")
        self.assertEqual(bridge.cancels(), [])
        self.assertEqual((await second.accepted).event_id, "ev2")

    async def test_an_event_cancelled_while_detached_is_taken_back_and_cancelled_by_the_next_connection(self) -> None:
        bridge = Bridge()
        handle = bridge.send()
        bridge.accepted("ev1", resume_token=RT)
        bridge.token("ev1", "one ", seq=1)
        bridge.drop()
        handle.cancel()
        self.assertIsInstance(await failure(handle.reply), EventCancelledError)
        self.assertEqual(bridge.cancels(), [])  # no connection holds the event: a cancel would be refused (S3)

        bridge.reconnect()
        self.assertEqual(
            bridge.connection.sent,
            [
                {"type": "resume", "event_id": "ev1", "resume_token": RT, "after_seq": 1},
                {"type": "cancel", "event_id": "ev1"},
            ],
        )
        other = bridge.send()
        bridge.token("ev1", "two ", seq=2)  # the rest, sent on the resumed connection before the cancel was judged
        bridge.error("CANCELLED", "ev1")
        bridge.accepted("ev2")
        self.assertEqual((await other.accepted).event_id, "ev2")
        self.assertEqual(await fragments(handle), (["one "], await failure(handle.reply)))

        bridge.drop()
        bridge.reconnect()  # cancelled for good: the next connection has nothing more to take back
        self.assertEqual(bridge.connection.sent, [])

    async def test_a_resume_refused_for_the_load_is_sent_again_after_the_time_given(self) -> None:
        bridge = Bridge()
        handle = bridge.send()
        bridge.accepted("ev1", resume_token=RT)
        bridge.drop()
        bridge.reconnect()
        resume = {"type": "resume", "event_id": "ev1", "resume_token": RT, "after_seq": 0}
        self.assertEqual(bridge.connection.sent, [resume])
        bridge.answer(type="error", code="TOO_MANY_REQUESTS", error="later", event_id="ev1", metadata={"retry_after_seconds": 2})
        await bridge.clock.advance(1.9)
        self.assertEqual(bridge.connection.sent, [resume])
        await bridge.clock.advance(0.1)
        self.assertEqual(bridge.connection.sent, [resume, resume])
        bridge.reply("ev1", "done")
        self.assertEqual(await handle.text(), "done")

    async def test_a_cancel_behind_a_resume_refused_for_the_load_is_tried_again_until_it_takes(self) -> None:
        bridge = Bridge()
        handle = bridge.send()
        bridge.accepted("ev1", resume_token=RT)
        bridge.drop()
        bridge.reconnect()
        bridge.answer(type="error", code="TOO_MANY_REQUESTS", error="later", event_id="ev1", metadata={"retry_after_seconds": 2})
        handle.cancel()
        self.assertEqual(bridge.cancels(), ["ev1"])  # at once, behind a resume
        bridge.answer(type="error", code="TOO_MANY_REQUESTS", error="later", event_id="ev1", metadata={"retry_after_seconds": 2})
        bridge.error("CANCEL_REFUSED", "ev1")
        await bridge.clock.advance(2)
        self.assertEqual([f["type"] for f in bridge.connection.sent], ["resume", "resume", "cancel", "resume", "cancel"])
        bridge.error("CANCELLED", "ev1")
        await bridge.clock.advance(10)
        self.assertEqual(bridge.cancels(), ["ev1", "ev1"])  # the cancel took: nothing more
        self.assertIsInstance(await failure(handle.reply), EventCancelledError)

    async def test_an_event_detached_without_a_resume_token_is_not_taken_back(self) -> None:
        bridge = Bridge(resume=False)
        handle = bridge.send()
        bridge.accepted("ev1", resume_token=RT)
        bridge.drop()  # without resume, the drop ends it
        handle.cancel()
        self.assertEqual(cast(BridgeError, await failure(handle.reply)).code, "CONNECTION_LOST")
        bridge.reconnect()
        self.assertEqual(bridge.connection.sent, [])

    async def test_cancel_refused_after_a_reply_that_won_reaches_no_send(self) -> None:
        bridge = Bridge()
        handle = bridge.send()
        bridge.accepted("ev1")
        handle.cancel()
        second = bridge.send()
        bridge.reply("ev1", "won the race")  # reached the bridge before the cancel (S8)
        bridge.error("CANCEL_REFUSED", "ev1")
        bridge.accepted("ev2")
        self.assertIsInstance(await failure(handle.reply), EventCancelledError)
        self.assertEqual((await second.accepted).event_id, "ev2")

    async def test_a_bridge_without_the_extension_answers_invalid_message_and_the_handle_has_ended_anyway(self) -> None:
        bridge = Bridge()
        handle = bridge.send()
        bridge.accepted("ev1")
        handle.cancel()
        second = bridge.send()
        bridge.error("INVALID_MESSAGE", text="Unknown message type: cancel.")  # no event_id: about the frame
        self.assertFalse(second.accepted.done())
        bridge.token("ev1", "still streaming")
        bridge.error("AGENT_TIMEOUT", "ev1")  # the event's own end, later: it is not the second send's answer
        bridge.accepted("ev2")
        self.assertIsInstance(await failure(handle.reply), EventCancelledError)
        self.assertEqual((await second.accepted).event_id, "ev2")

    async def test_a_reader_waiting_for_fragments_is_woken_by_the_cancel(self) -> None:
        bridge = Bridge()
        handle = bridge.send()
        bridge.accepted("ev1")
        reading = asyncio.ensure_future(fragments(handle))
        await asyncio.sleep(0)
        bridge.token("ev1", "a")
        await asyncio.sleep(0)
        handle.cancel()
        read, err = await reading
        self.assertEqual(read, ["a"])
        self.assertIsInstance(err, EventCancelledError)


if __name__ == "__main__":
    unittest.main()
