"""Every event a handler gets ends with exactly one reply or error, whatever the handler does (never silent), and an
exception's text never reaches the app (decision C6)."""

import asyncio
import unittest
from collections.abc import AsyncIterator
from typing import Any

import _path  # noqa: F401

from agent_bridge import AgentEvent, AgentFailure, ConnectorCallbacks, EventError, Reply
from agent_bridge.clock import SYSTEM_CLOCK
from agent_bridge.event_run import HANDLER_FAILED, NO_REPLY, EventRun
from agent_bridge.handler import Handler
from agent_bridge.sessions import SessionStore


class Host:
    agent_id = "tutor"

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.forgotten: list[str] = []

    def send(self, frame: dict[str, Any]) -> None:
        self.frames.append(frame)

    def forget(self, event_id: str) -> None:
        self.forgotten.append(event_id)


class ManualSleep:
    """A handler timeout that fires only when the test says so."""

    def __init__(self) -> None:
        self.due = asyncio.Event()
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        await self.due.wait()


def event() -> AgentEvent:
    session, created = SessionStore(1, {}, SYSTEM_CLOCK).acquire("svc:app:t")
    return AgentEvent("tutor", "ev1", "app", "t", "svc:app:t", {"text": "hi"}, session, created)


async def run(handler: Handler, sleep: ManualSleep | None = None) -> tuple[Host, list[EventError]]:
    host, errors = Host(), list[EventError]()
    run = EventRun(host, "ev1", ConnectorCallbacks(event_error=errors.append))
    sleep = sleep or ManualSleep()
    run.start(handler, event(), 295.0, sleep)
    for _ in range(100):
        if run.finished:
            break
        await asyncio.sleep(0)
    return host, errors


def kinds(host: Host) -> list[tuple[str, ...]]:
    return [(f["type"], f.get("token", f.get("content", f.get("code", "")))) for f in host.frames]


class ErrorMappingTest(unittest.IsolatedAsyncioTestCase):
    async def test_a_generator_streams_its_fragments_then_replies(self) -> None:
        async def handler(e: AgentEvent) -> AsyncIterator[str]:
            yield "Hello "
            yield "you"

        host, _ = await run(handler)
        self.assertEqual(kinds(host), [("token", "Hello "), ("token", "you"), ("reply", "")])
        self.assertEqual(host.forgotten, ["ev1"])

    async def test_a_returned_string_or_reply_is_the_reply(self) -> None:
        async def text(e: AgentEvent) -> str:
            return "whole"

        async def reply(e: AgentEvent) -> Reply:
            return Reply("done")

        self.assertEqual(kinds((await run(text))[0]), [("reply", "whole")])
        self.assertEqual(kinds((await run(reply))[0]), [("reply", "done")])

    async def test_an_exception_is_agent_error_with_a_fixed_text(self) -> None:
        async def handler(e: AgentEvent) -> AsyncIterator[str]:
            yield "partial "
            raise RuntimeError("secret key sk-123 leaked")

        with self.assertLogs("agent_bridge", "ERROR") as logged:
            host, errors = await run(handler)
        self.assertEqual(host.frames[-1], {"type": "error", "event_id": "ev1", "code": "AGENT_ERROR", "error": HANDLER_FAILED})
        self.assertNotIn("sk-123", str(host.frames))
        self.assertIn("sk-123", "\n".join(logged.output))  # the operator still sees the cause
        self.assertEqual([(e.code, e.message) for e in errors], [("AGENT_ERROR", HANDLER_FAILED)])

    async def test_agent_failure_sends_its_code_and_text(self) -> None:
        async def handler(e: AgentEvent) -> str:
            raise AgentFailure("AGENT_TIMEOUT", "The model took too long.")

        host, _ = await run(handler)
        self.assertEqual(host.frames, [{"type": "error", "event_id": "ev1", "code": "AGENT_TIMEOUT", "error": "The model took too long."}])

    async def test_a_code_of_the_wrong_form_is_sent_as_agent_error(self) -> None:
        async def handler(e: AgentEvent) -> str:
            raise AgentFailure("oops!", "text")

        with self.assertLogs("agent_bridge", "WARNING"):
            host, _ = await run(handler)
        self.assertEqual(kinds(host), [("error", "AGENT_ERROR")])

    async def test_returning_nothing_without_fragments_is_an_error(self) -> None:
        async def handler(e: AgentEvent) -> None:
            return None

        host, _ = await run(handler)
        self.assertEqual(host.frames[-1]["error"], NO_REPLY)

    async def test_a_handler_that_hangs_ends_with_agent_timeout(self) -> None:
        sleep = ManualSleep()

        async def handler(e: AgentEvent) -> str:
            await asyncio.Event().wait()
            return "never"

        host, _ = await run(handler, sleep)
        self.assertEqual(host.frames, [])
        self.assertEqual(sleep.asked, [295.0])
        sleep.due.set()
        for _ in range(20):
            await asyncio.sleep(0)
        self.assertEqual(kinds(host), [("error", "AGENT_TIMEOUT")])

    async def test_nothing_more_is_sent_after_the_end(self) -> None:
        async def handler(e: AgentEvent) -> AsyncIterator[str | Reply]:
            yield "a"
            yield Reply("a")
            yield "ignored"

        host, _ = await run(handler)
        self.assertEqual(kinds(host), [("token", "a"), ("reply", "a")])


if __name__ == "__main__":
    unittest.main()
