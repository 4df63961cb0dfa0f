"""An agent that streams long answers, for the Stop button: `python3 streaming_agent.py` with BRIDGE_URL
(`wss://host/v1`) and AGENT_TOKEN (`rla_{agent_id}_…`) in the environment.

An event's payload `{"fragments": N, "pause_after": K}` gets N numbered fragments, with a pause after the first K
(the model thinking) that only the app's cancel ends. Its handler catches the CancelledError and, on purpose, goes
on streaming, as a handler that ignores its cancel would: the connector sends none of it. A real handler lets the
CancelledError propagate (or stops its model and re-raises). It prints what it sees, and runs until SIGTERM.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from _run import required_env, until_stopped

from agent_bridge import AgentEvent, Connector, ConnectorCallbacks, EventCancelled, agent_endpoint


async def stream(event: AgentEvent) -> AsyncIterator[str]:
    count = int(event.payload.get("fragments", 10))
    pause_after = int(event.payload.get("pause_after", count))
    yielded_after_cancel = 0
    try:
        for i in range(count):
            if i == pause_after:
                try:
                    await asyncio.Event().wait()  # thinking, until the app presses Stop
                except asyncio.CancelledError as err:
                    print(f"handler cancelled {event.event_id}: {err} (event.cancelled={event.cancelled.is_set()})", flush=True)
            if event.cancelled.is_set():
                yielded_after_cancel += 1
            yield f"{i} "
            await asyncio.sleep(0.001)
    finally:
        if event.cancelled.is_set():
            print(f"handler stopped {event.event_id} after yielding {yielded_after_cancel} more", flush=True)


async def main() -> None:
    url, token = required_env("BRIDGE_URL", "AGENT_TOKEN")
    agent_id = token.split("_")[1] if token.count("_") >= 2 else ""
    stopped = until_stopped()
    connector: Connector

    def cancelled(n: EventCancelled) -> None:
        print(f"cancelled {n.event_id} in_flight={connector.in_flight(n.agent_id)}", flush=True)

    connector = Connector(
        {"connection": {"url": agent_endpoint(url)}, "agents": [{"agent_id": agent_id, "token": token}]},
        stream,
        callbacks=ConnectorCallbacks(
            connected=lambda n: print(f"connected {n.agent_id}", flush=True),
            event_replied=lambda n: print(f"replied {n.event_id} after {n.token_count} fragments", flush=True),
            event_cancelled=cancelled,
        ),
    )
    await connector.start()
    await stopped.wait()
    await connector.close()


if __name__ == "__main__":
    asyncio.run(main())
