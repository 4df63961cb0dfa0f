"""The app command for `bridge-conformance client --role app --command "python3 python/examples/conformance_app.py"`.

Connects with BRIDGE_URL and BRIDGE_TOKEN (the token in the Authorization header; heartbeat and backoff built in),
sends the contract's event once, prints the reply's text (or the error's code), and stays connected until it is
stopped, so the suite can watch its heartbeat and reconnects. It never sends the event again. It honours
BRIDGE_TIME_SCALE through a scaled clock, and a token refused for good leaves it idle, not exited. In app-cancels it
cancels the event after its first fragment (handle.cancel(), the cancel extension) and prints "error CANCELLED".
"""

from __future__ import annotations

import asyncio
import os
import sys

from _run import required_env, until_stopped

from agent_bridge import AppClient, BridgeError, connect_app, scaled_clock


async def converse(url: str, token: str) -> AppClient | None:
    try:
        app = await connect_app(url, token, clock=scaled_clock(float(os.environ.get("BRIDGE_TIME_SCALE", "1"))))
    except BridgeError as err:
        # Refused for good (or out of retries): retrying cannot help, so stay idle until stopped.
        print(f"conformance-app: {err.code}: {err}; idle until stopped", file=sys.stderr, flush=True)
        return None
    handle = app.send("echo-agent", "conformance", {"text": "hello"})
    try:
        if os.environ.get("BRIDGE_SCENARIO") == "app-cancels":
            async for _ in handle.fragments:
                handle.cancel()  # the user pressed Stop once the answer began
                break
        print(await handle.text(), flush=True)
    except BridgeError as err:
        # An error about the event ends only the event: say so and stay.
        print(f"error {err.code}", flush=True)
    return app


async def main() -> None:
    url, token = required_env("BRIDGE_URL", "BRIDGE_TOKEN")
    stopped = until_stopped()
    conversing = asyncio.ensure_future(converse(url, token))
    waiting = asyncio.ensure_future(stopped.wait())
    await asyncio.wait({conversing, waiting}, return_when=asyncio.FIRST_COMPLETED)
    await waiting
    if conversing.done() and (app := conversing.result()) is not None:
        await app.close()
    conversing.cancel()


if __name__ == "__main__":
    asyncio.run(main())
