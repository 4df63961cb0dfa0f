"""An echo agent on the connector: `python3 echo_agent.py connector.json` (or .yaml), or, without a file, one agent
from the environment: BRIDGE_URL (`wss://host/v1`) and AGENT_TOKEN (`rla_…`). It streams the event's text back word
by word, keeps a count of turns in the session, and stops cleanly on SIGTERM or Ctrl-C (events in flight get the
drain to finish). Notifications are printed as lines of text."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator

from _run import required_env, until_stopped

from agent_bridge import (
    AgentEvent,
    AgentFailure,
    AgentReplyMetadata,
    Connector,
    ConnectorCallbacks,
    Reply,
    ResolvedConfig,
    agent_endpoint,
    load_config,
    split_words,
)


async def echo(event: AgentEvent) -> AsyncIterator[str | Reply]:
    text = event.payload.get("text")
    if not isinstance(text, str):
        raise AgentFailure("AGENT_ERROR", "Send a payload with a text field.")
    turns = event.session.data["turns"] = event.session.data.get("turns", 0) + 1
    for word in split_words(f"You said: {text}"):
        yield word
        await asyncio.sleep(0.01)  # a model would take its time
    yield Reply(metadata=AgentReplyMetadata(model="echo", tokens_used=turns))


def configuration() -> ResolvedConfig | dict[str, object]:
    if len(sys.argv) > 1:
        return load_config(sys.argv[1])
    url, token = required_env("BRIDGE_URL", "AGENT_TOKEN")
    return {"connection": {"url": agent_endpoint(url)}, "agents": [{"agent_id": token.split("_")[1], "token": token}]}


def say(what: str) -> None:
    print(what, flush=True)


async def main() -> None:
    callbacks = ConnectorCallbacks(
        connected=lambda n: say(f"connected {n.agent_id}"),
        disconnected=lambda n: say(f"disconnected {n.agent_id} ({n.code} {n.reason})"),
        reconnecting=lambda n: say(f"reconnecting {n.agent_id}: attempt {n.attempt} in {n.delay_ms:.0f} ms"),
        event_received=lambda n: say(f"event {n.event_id} for {n.agent_id} ({n.session_key})"),
        event_replied=lambda n: say(f"replied {n.event_id} after {n.token_count} fragments"),
        event_error=lambda n: say(f"error {n.code} {n.event_id}: {n.message}"),
    )
    stopped = until_stopped()
    connector = Connector(configuration(), echo, callbacks=callbacks)
    await connector.start()
    if connector.health_url:
        say(f"health {connector.health_url}")
    await stopped.wait()
    result = await connector.stop()
    say(f"stopped, {len(result.cut_short)} event(s) cut short")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as err:  # a start-up failure is one line (decision O11)
        print(f"echo_agent: {err}", file=sys.stderr)
        sys.exit(1)
