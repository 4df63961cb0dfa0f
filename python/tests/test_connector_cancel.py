"""The connector's side of the cancel extension (S4): on `cancel` the handler's task is cancelled (CancelledError at
its next await) and `event.cancelled` is set; nothing more is sent for the event, even by a handler that swallows
the CancelledError and goes on; the event leaves the connector's books and `event_cancelled` is notified."""

import asyncio
import unittest
from collections.abc import AsyncIterator
from typing import Any, cast

import _path  # noqa: F401

from agent_bridge import AgentEvent, AgentSettings, ConnectorCallbacks, EventCancelled, Reply
from agent_bridge._generated.messages import parse_service_to_agent
from agent_bridge.agent_runner import AgentRunner
from agent_bridge.backoff import ReconnectPolicy
from agent_bridge.handler import Handler


class StillClock:
    """Time that does not pass: the handler timeout never fires unless a test wants it to."""

    def now(self) -> float:
        return 1_700_000_000.0

    def monotonic(self) -> float:
        return 0.0

    async def sleep(self, seconds: float) -> None:
        await asyncio.Event().wait()


class OpenConnection:
    """An accepted connection that keeps what the connector sends."""

    ready = True
    state = "open"
    closing_error = None

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, frame: dict[str, Any]) -> bool:
        self.sent.append(frame)
        return True


class Agent:
    def __init__(self, handler: Handler) -> None:
        self.cancelled: list[EventCancelled] = []
        self.runner = AgentRunner(
            agent=AgentSettings("tutor", "rla_tutor_secret"),
            url="ws://127.0.0.1:1/v1/ws/agent",
            policy=ReconnectPolicy(),
            handler=handler,
            handler_timeout_s=295.0,
            clock=StillClock(),
            callbacks=ConnectorCallbacks(event_cancelled=self.cancelled.append),
        )
        self.connection = OpenConnection()
        self.runner.connection = cast(Any, self.connection)

    def bridge_sends(self, **fields: Any) -> None:
        self.runner.on_message(parse_service_to_agent(fields))

    def event(self, event_id: str = "ev1") -> None:
        self.bridge_sends(
            type="event", event_id=event_id, app_id="app-1", thread_id="t", session_key="svc:org-1:app-1:t", payload={}
        )

    def cancel(self, event_id: str = "ev1") -> None:
        self.bridge_sends(type="cancel", event_id=event_id)

    def frames(self) -> list[tuple[str, str]]:
        return [(f["type"], f.get("token", f.get("content", f.get("code", "")))) for f in self.connection.sent]


async def settle() -> None:
    for _ in range(50):
        await asyncio.sleep(0)


class ConnectorCancelTest(unittest.IsolatedAsyncioTestCase):
    async def test_the_handler_is_cancelled_and_the_event_leaves_the_books(self) -> None:
        seen: list[BaseException] = []
        events: list[AgentEvent] = []

        async def handler(event: AgentEvent) -> AsyncIterator[str]:
            events.append(event)
            yield "thinking "
            try:
                await asyncio.Event().wait()  # the model, still working when the app presses Stop
            except asyncio.CancelledError as err:
                seen.append(err)
                raise
            yield "never"

        agent = Agent(handler)
        agent.event()
        await settle()
        self.assertEqual(agent.runner.in_flight, 1)
        self.assertFalse(events[0].cancelled.is_set())

        with self.assertLogs("agent_bridge", "INFO"):
            agent.cancel()
        await settle()
        self.assertEqual(len(seen), 1)
        self.assertEqual(seen[0].args, ("Event ev1 was cancelled by the app.",))
        self.assertTrue(events[0].cancelled.is_set())
        self.assertEqual(agent.frames(), [("token", "thinking ")])  # no reply, no error: the bridge ended it
        self.assertEqual(agent.runner.in_flight, 0)
        self.assertEqual(agent.cancelled, [EventCancelled("tutor", "ev1")])
        await asyncio.wait_for(agent.runner.drain(), 1)  # nothing left in flight to wait for

    async def test_a_handler_that_swallows_its_cancel_and_goes_on_yielding_is_not_heard(self) -> None:
        after: list[str] = []

        async def handler(event: AgentEvent) -> AsyncIterator[str | Reply]:
            yield "a "
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                pass  # on purpose: it ignores the Stop
            for word in ("b ", "c "):
                after.append(word)
                yield word
            yield Reply("a b c")

        agent = Agent(handler)
        agent.event()
        await settle()
        with self.assertLogs("agent_bridge", "INFO"):
            agent.cancel()
        await settle()
        self.assertEqual(after, ["b "])  # it got as far as its next yield, which was not sent
        self.assertEqual(agent.frames(), [("token", "a ")])
        self.assertEqual(agent.runner.in_flight, 0)

    async def test_a_coroutine_that_swallows_its_cancel_and_returns_sends_no_reply(self) -> None:
        returned: list[str] = []

        async def handler(event: AgentEvent) -> str:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                pass
            await asyncio.sleep(0)  # it carries on awaiting: no second CancelledError comes
            returned.append("late answer")
            return "late answer"

        agent = Agent(handler)
        agent.event()
        await settle()
        with self.assertLogs("agent_bridge", "INFO"):
            agent.cancel()
        await settle()
        self.assertEqual(returned, ["late answer"])
        self.assertEqual(agent.frames(), [])
        self.assertEqual(len(agent.cancelled), 1)

    async def test_work_the_handler_started_elsewhere_can_wait_for_event_cancelled(self) -> None:
        stopped: list[str] = []

        async def model(event: AgentEvent) -> None:
            # A task of its own (or a thread's watcher): the connector cancels the handler, not it.
            await event.cancelled.wait()
            stopped.append(event.event_id)

        async def handler(event: AgentEvent) -> AsyncIterator[str]:
            work = asyncio.create_task(model(event))
            yield "a "
            await asyncio.shield(work)

        agent = Agent(handler)
        agent.event()
        await settle()
        self.assertEqual(stopped, [])
        with self.assertLogs("agent_bridge", "INFO"):
            agent.cancel()
        await settle()
        self.assertEqual(stopped, ["ev1"])
        self.assertEqual(agent.frames(), [("token", "a ")])

    async def test_a_cancel_for_an_event_that_has_ended_changes_nothing(self) -> None:
        async def handler(event: AgentEvent) -> str:
            return "done"

        agent = Agent(handler)
        agent.event()
        await settle()
        agent.cancel()  # crossed the reply (S8)
        agent.cancel("ev-unknown")
        await settle()
        self.assertEqual(agent.frames(), [("reply", "done")])
        self.assertEqual(agent.cancelled, [])

    async def test_the_other_events_go_on(self) -> None:
        gate = asyncio.Event()

        async def handler(event: AgentEvent) -> AsyncIterator[str]:
            await gate.wait()
            yield event.event_id

        agent = Agent(handler)
        agent.event("ev1")
        agent.event("ev2")
        await settle()
        with self.assertLogs("agent_bridge", "INFO"):
            agent.cancel("ev1")
        gate.set()
        await settle()
        self.assertEqual(agent.frames(), [("token", "ev2"), ("reply", "")])


if __name__ == "__main__":
    unittest.main()
