"""The agent connector (spec/protocol.md#connector-role, §2.6, §6.5): one connection per configured agent, each
event handed to the handler with its runtime session, fragments within the limit, an optional health endpoint,
the local notifications as callbacks, and a stop that lets the events in flight finish within a bounded drain and
names those it had to cut short (decision C8)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from ._generated.limits import AGENT_TIMEOUT_MS, CONNECTOR_DRAIN_TIMEOUT_MS
from ._generated.messages import ConnectorHealth
from .agent_runner import AgentRunner
from .backoff import Random
from .clock import SYSTEM_CLOCK, Clock
from .config import ResolvedConfig, load_config
from .handler import Handler
from .health import HealthServer, connector_status, start_health_server
from .notifications import ConnectorCallbacks, CutShort, Stopped, notify

log = logging.getLogger("agent_bridge")

HANDLER_TIMEOUT_MARGIN_MS = 5_000
"""The default handler timeout ends an event this much before the bridge's own AGENT_TIMEOUT would."""
DEFAULT_HANDLER_TIMEOUT_MS = AGENT_TIMEOUT_MS - HANDLER_TIMEOUT_MARGIN_MS


class ConnectorStartError(RuntimeError):
    """Some agent could not connect: refused for good, or out of retries. The message names each."""


class Connector:
    """Runs `handler` for every event of every configured agent.

        connector = Connector(load_config("connector.yaml"), handle)
        await connector.start()      # returns once every agent is connected
        ...
        await connector.stop()       # drains the events in flight, then closes
    """

    def __init__(
        self,
        config: ResolvedConfig | Mapping[str, Any],
        handler: Handler,
        *,
        callbacks: ConnectorCallbacks | None = None,
        handlers: Mapping[str, Handler] | None = None,
        handler_timeout_ms: float = DEFAULT_HANDLER_TIMEOUT_MS,
        drain_timeout_ms: float = CONNECTOR_DRAIN_TIMEOUT_MS,
        clock: Clock = SYSTEM_CLOCK,
        random: Random | None = None,
        heartbeat_interval_ms: float | None = None,
        heartbeat_timeout_ms: float | None = None,
    ) -> None:
        self.config = config if isinstance(config, ResolvedConfig) else load_config(config)
        if not handler_timeout_ms > 0:
            raise ValueError(f"handler_timeout_ms must be positive, got {handler_timeout_ms}")
        if not drain_timeout_ms >= 0:
            raise ValueError(f"drain_timeout_ms must be 0 or more, got {drain_timeout_ms}")
        for agent_id in handlers or {}:
            if all(a.agent_id != agent_id for a in self.config.agents):
                raise ValueError(f"handlers names {agent_id}, which is not in the configuration")
        self.callbacks = callbacks or ConnectorCallbacks()
        self._clock = clock
        self._drain_s = drain_timeout_ms / 1000
        self._runners = {
            agent.agent_id: AgentRunner(
                agent=agent,
                url=self.config.url,
                policy=self.config.reconnect,
                handler=(handlers or {}).get(agent.agent_id, handler),
                handler_timeout_s=handler_timeout_ms / 1000,
                clock=clock,
                callbacks=self.callbacks,
                random=random,
                heartbeat_interval_ms=heartbeat_interval_ms,
                heartbeat_timeout_ms=heartbeat_timeout_ms,
            )
            for agent in self.config.agents
        }
        self._health_server: HealthServer | None = None
        self._state = "new"
        self._stopping: asyncio.Task[Stopped] | None = None
        self._cut_drain_short = asyncio.Event()

    async def start(self) -> None:
        """Starts the health endpoint (if configured), then connects every agent; returns when all are connected.
        If an agent is refused for good or runs out of retries, everything is closed again and this raises a
        ConnectorStartError naming each failed agent. With max_retries -1 an agent never runs out (decision C7)."""
        if self._state != "new":
            raise RuntimeError(f"the connector was already started ({self._state})")
        self._state = "starting"
        try:
            h = self.config.health
            if h is not None:
                self._health_server = await start_health_server(h.host, h.port, h.path, self.health)
                log.info("connector health endpoint on %s", self._health_server.url)
            results = await asyncio.gather(*(r.start() for r in self._runners.values()), return_exceptions=True)
            failed = [f"{agent_id}: {result}" for agent_id, result in zip(self._runners, results) if result is not None]
            if failed:
                raise ConnectorStartError(f"could not connect {'; '.join(failed)}")
        except BaseException:
            await self._shutdown(0, announce=False)
            raise
        if self._state == "starting":
            self._state = "running"

    async def stop(self) -> Stopped:
        """Stops gracefully (decision C8): each new event is answered at once with AGENT_ERROR (its handler not
        started); the events in flight get up to the drain timeout to finish; whatever is left then ends with
        AGENT_ERROR; every connection and the health endpoint close. Returns the events it ended early."""
        return await self._shutdown(self._drain_s, announce=True)

    async def close(self) -> Stopped:
        """Stops at once: ends every event in flight with `error` (never silence) and closes everything. During a
        stop()'s drain, cuts the drain short; both return the same result."""
        return await self._shutdown(0, announce=True)

    def _shutdown(self, drain_s: float, *, announce: bool) -> asyncio.Future[Stopped]:
        if self._stopping is not None:
            if drain_s == 0:
                self._cut_drain_short.set()
            return asyncio.shield(self._stopping)
        self._stopping = asyncio.ensure_future(self._drain_then_close(drain_s, announce))
        return asyncio.shield(self._stopping)

    async def _drain_then_close(self, drain_s: float, announce: bool) -> Stopped:
        self._state = "closing"
        runners = list(self._runners.values())
        drained = asyncio.ensure_future(asyncio.gather(*(r.drain() for r in runners)))
        in_flight = sum(r.in_flight for r in runners)
        if in_flight and drain_s > 0:
            log.info("stopping: letting %d event(s) in flight finish, for %.0f ms at most", in_flight, drain_s * 1000)
            cut = asyncio.ensure_future(self._cut_drain_short.wait())
            timer = asyncio.ensure_future(self._clock.sleep(drain_s))
            await asyncio.wait({drained, cut, timer}, return_when=asyncio.FIRST_COMPLETED)
            cut.cancel()
            timer.cancel()
        drained.cancel()
        ended = await asyncio.gather(*(r.close() for r in runners))
        cut_short = tuple(CutShort(r.agent_id, e) for r, ids in zip(runners, ended) for e in ids)
        if cut_short:
            named = ", ".join(f"{c.event_id} ({c.agent_id})" for c in cut_short)
            log.warning("stop ended %d event(s) still in flight with AGENT_ERROR: %s", len(cut_short), named)
        if self._health_server is not None:
            await self._health_server.close()
            self._health_server = None
        self._state = "closed"
        result = Stopped(cut_short)
        if announce:
            notify(self.callbacks.stopped, result)
        return result

    def health(self) -> ConnectorHealth:
        """What the health endpoint returns."""
        agents = {agent_id: runner.health() for agent_id, runner in self._runners.items()}
        return ConnectorHealth(status=connector_status(agents), agents=agents)

    @property
    def health_url(self) -> str | None:
        """The health endpoint's URL once started (None when none is configured)."""
        return None if self._health_server is None else self._health_server.url

    @property
    def agent_ids(self) -> list[str]:
        return list(self._runners)

    def is_connected(self, agent_id: str) -> bool:
        return self._runner(agent_id).is_connected

    def in_flight(self, agent_id: str) -> int:
        """Events of one agent handed to the handler and not yet ended."""
        return self._runner(agent_id).in_flight

    def _runner(self, agent_id: str) -> AgentRunner:
        runner = self._runners.get(agent_id)
        if runner is None:
            raise KeyError(f"agent {agent_id} is not in the configuration")
        return runner
