"""What the examples share: the package importable from a checkout, and a run that lasts until SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

# Run from a checkout (python/examples/x.py) without installing the package.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def until_stopped() -> asyncio.Event:
    """An event set by the first SIGTERM or SIGINT."""
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopped.set)
    return stopped


def required_env(*names: str) -> list[str]:
    values = [os.environ.get(name, "") for name in names]
    if not all(values):
        print(f"{' and '.join(names)} must be set", file=sys.stderr)
        sys.exit(2)
    return values
