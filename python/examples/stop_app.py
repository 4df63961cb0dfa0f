"""An app with a Stop button: `python3 stop_app.py 1000 100` with BRIDGE_URL (`wss://host/v1`), APP_TOKEN (`rlk_…`)
and AGENT_ID (an agent like streaming_agent.py) in the environment. It asks for 1,000 fragments, cancels the event
after reading 100, then sends a short one on the same connection (whose answer must not be mixed up with the
cancel's), prints what it got, and exits."""

from __future__ import annotations

import asyncio
import sys

from _run import required_env

from agent_bridge import BridgeError, EventCancelledError, connect_app


async def main() -> int:
    url, token, agent_id = required_env("BRIDGE_URL", "APP_TOKEN", "AGENT_ID")
    count, stop_after = (int(a) for a in (sys.argv[1:3] if len(sys.argv) >= 3 else ("1000", "100")))
    app = await connect_app(url, token)
    try:
        handle = app.send(agent_id, "stop-button", {"fragments": count, "pause_after": stop_after})
        print(f"accepted {(await handle.accepted).event_id}", flush=True)
        read = 0
        try:
            async for _ in handle.fragments:
                read += 1
                if read == stop_after:
                    handle.cancel()
        except EventCancelledError as err:
            print(f"cancelled {err.event_id} code={err.code} after {read} fragments", flush=True)
        try:
            await handle.reply
        except EventCancelledError:
            print("reply cancelled too", flush=True)

        after = app.send(agent_id, "stop-button", {"fragments": 3})
        print(f"next reply {await after.text()!r}", flush=True)
        return 0
    except BridgeError as err:
        print(f"error {err.code}: {err}", flush=True)
        return 1
    finally:
        await app.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
