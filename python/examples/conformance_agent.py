"""The agent command for `bridge-conformance client --role agent --command "python3 python/examples/conformance_agent.py"`.

A Connector configured in code from BRIDGE_URL and BRIDGE_TOKEN (the agent_id is read from the token,
`rla_{agent_id}_{secret}`): it echoes each event's text as streamed fragments, then replies, and runs until it is
stopped (SIGTERM), ending anything in flight with an error. It honours BRIDGE_TIME_SCALE through a scaled clock, and
a token refused for good leaves it idle, not exited: the harness contract is to run until stopped. In agent-cancel it
streams slowly, as the contract asks, and stops when the app cancels (the connector cancels the handler's task).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator

from _run import required_env, until_stopped

from agent_bridge import AgentEvent, AgentReplyMetadata, Connector, Reply, agent_endpoint, scaled_clock, split_words


SLOWLY = os.environ.get("BRIDGE_SCENARIO") == "agent-cancel"
"""agent-cancel's contract: stream each answer over at least 5 s (here 6 s: 60 fragments, 100 ms apart, real time)."""


async def echo(event: AgentEvent) -> AsyncIterator[str | Reply]:
    text = event.payload.get("text")
    if SLOWLY:
        for _ in range(60):  # a cancel raises CancelledError at the sleep: nothing more is sent for the event
            yield "."
            await asyncio.sleep(0.1)
    for fragment in split_words(f"You said: {text if isinstance(text, str) else event.payload}"):
        yield fragment
    yield Reply(metadata=AgentReplyMetadata(model="echo"))


async def main() -> None:
    url, token = required_env("BRIDGE_URL", "BRIDGE_TOKEN")
    agent_id = token.split("_")[1] if token.count("_") >= 2 else ""
    stopped = until_stopped()
    reconnect: dict[str, int] = {}
    # The connector gives up after 5 attempts by default (§2.6); the backoff-cap scenario needs 8 to see the cap.
    if os.environ.get("BRIDGE_SCENARIO") == "agent-backoff-cap":
        reconnect["maxRetries"] = 10
    config = {
        "connection": {"url": agent_endpoint(url), "reconnect": reconnect},
        "agents": [{"agent_id": agent_id, "token": token}],
    }
    connector = Connector(config, echo, clock=scaled_clock(float(os.environ.get("BRIDGE_TIME_SCALE", "1"))))
    starting = asyncio.ensure_future(connector.start())
    waiting = asyncio.ensure_future(stopped.wait())
    await asyncio.wait({starting, waiting}, return_when=asyncio.FIRST_COMPLETED)
    if starting.done():
        if starting.exception() is None:
            print(f"conformance-agent: {agent_id} connected", flush=True)
        else:
            # Refused for good (or out of retries): retrying cannot help, so stay idle until stopped.
            print(f"conformance-agent: {starting.exception()}; idle until stopped", file=sys.stderr, flush=True)
        await waiting
    starting.cancel()
    await connector.close()


if __name__ == "__main__":
    asyncio.run(main())
