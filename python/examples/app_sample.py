"""An app: `python3 app_sample.py "What is a prime?"` with BRIDGE_URL (`wss://host/v1`), APP_TOKEN (`rlk_…`) and
AGENT_ID in the environment. It lists the agents it may use, sends one event, prints the fragments as they stream
and then the reply's metadata, and exits."""

from __future__ import annotations

import asyncio
import sys

from _run import required_env

from agent_bridge import BridgeError, connect_app


async def main() -> int:
    url, token, agent_id = required_env("BRIDGE_URL", "APP_TOKEN", "AGENT_ID")
    try:
        app = await connect_app(url, token)
    except BridgeError as err:  # refused (UNAUTHORIZED…), or the bridge could not be reached
        print(f"error {err.code}: {err}", file=sys.stderr, flush=True)
        return 1
    try:
        agents = await app.discover()
        print("agents:", ", ".join(f"{a.agent_id} ({a.name})" for a in agents), flush=True)
        handle = app.send(agent_id, "sample-thread", {"text": " ".join(sys.argv[1:]) or "hello"})
        accepted = await handle.accepted
        print(f"accepted {accepted.event_id}", flush=True)
        async for fragment in handle.fragments:
            print(f"token {fragment!r}", flush=True)
        reply = await handle.reply
        print(f"reply {reply.reply!r} model={reply.metadata.model} latency_ms={reply.metadata.latency_ms}", flush=True)
        return 0
    except BridgeError as err:
        print(f"error {err.code}: {err}", flush=True)
        return 1
    finally:
        await app.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
