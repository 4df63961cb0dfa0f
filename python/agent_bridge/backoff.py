"""The reconnect policy and the delays it gives (spec/protocol.md#client-reconnect): from the base delay, doubling,
capped, each delay reduced by up to `jitter` at random so that many clients do not reconnect in step."""

from __future__ import annotations

import math
import random as _random
from dataclasses import dataclass
from typing import Callable

from ._generated.limits import RECONNECT_BASE_DELAY_MS, RECONNECT_MAX_DELAY_MS

Random = Callable[[], float]
"""Numbers in [0, 1), as random.random gives; tests pass a fixed one."""

DEFAULT_JITTER = 0.2
"""The fraction a delay may be shortened by at random (the conformance suite allows ±25 %)."""


@dataclass(frozen=True)
class ReconnectPolicy:
    enabled: bool = True
    max_retries: int = 5
    """Attempts after a drop before giving up; 0 never reconnects, -1 (any negative number) for ever (decision C7)."""
    base_delay_ms: int = RECONNECT_BASE_DELAY_MS
    max_delay_ms: int = RECONNECT_MAX_DELAY_MS
    jitter: float = DEFAULT_JITTER


def backoff_delay_ms(attempt: int, policy: ReconnectPolicy, random: Random = _random.random) -> float:
    """The delay before reconnect attempt `attempt` (1-based): the base doubling up to the cap, minus the jitter."""
    if attempt < 1:
        raise ValueError(f"attempts count from 1, got {attempt}")
    # A connection that never gives up counts attempts without end: doubling stops once the cap is reached, so the
    # arithmetic stays finite however many there have been.
    ratio = max(1.0, policy.max_delay_ms / policy.base_delay_ms)
    doublings = min(attempt - 1, math.ceil(math.log2(ratio)))
    full = min(float(policy.max_delay_ms), policy.base_delay_ms * 2.0**doublings)
    return round(full * (1 - policy.jitter * random()))


def may_retry(attempts: int, max_retries: int) -> bool:
    """Whether a connection that has made `attempts` reconnect attempts may make another."""
    return max_retries < 0 or attempts < max_retries
