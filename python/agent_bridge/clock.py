"""The time the clients run on: every heartbeat, backoff and timeout sleeps through a Clock, so tests and the
conformance suite's time scale (BRIDGE_TIME_SCALE) can change how fast it goes without touching the code."""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Wall time, seconds since the epoch (what the health endpoint reports)."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (what TTLs and durations are measured on)."""
        ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class ScaledClock:
    """Time running `k` times faster: a sleep of 30 s takes 30/k s, and the readings advance k times as fast.

    The conformance suite's `--time-scale K` asks a client to run the protocol's heartbeat and backoff this way.
    """

    def __init__(self, k: float) -> None:
        if not k >= 1 or k == float("inf"):
            raise ValueError(f"a time scale must be a finite number >= 1, got {k}")
        self.k = k
        self._wall_origin = time.time()
        self._mono_origin = time.monotonic()

    def now(self) -> float:
        return self._wall_origin + (time.time() - self._wall_origin) * self.k

    def monotonic(self) -> float:
        return self._mono_origin + (time.monotonic() - self._mono_origin) * self.k

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) / self.k)


SYSTEM_CLOCK = SystemClock()


def scaled_clock(k: float) -> Clock:
    """The system clock for k = 1, else a ScaledClock."""
    if k == 1:
        return SYSTEM_CLOCK
    return ScaledClock(k)
