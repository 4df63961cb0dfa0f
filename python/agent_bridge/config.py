"""The connector's configuration (spec/protocol.md §2.6): a dict, or a JSON or YAML file, whose `${VAR}` references
are filled in from the environment, then checked by the generated ConnectorConfig (a misspelt option fails
loudly), then completed with the defaults. Interpolation happens on the parsed document (string values only), never
on the raw text, so a variable's value can never change the document's structure."""

from __future__ import annotations

import importlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._generated.limits import (
    CONNECTOR_RECONNECT_MAX_ATTEMPTS,
    ENDPOINT_PATHS,
    RECONNECT_BASE_DELAY_MS,
    RECONNECT_MAX_DELAY_MS,
    SESSION_TTL_DEFAULT_DAYS,
)
from ._generated.messages import ConnectorConfig, MessageError
from .backoff import ReconnectPolicy


class ConnectorConfigError(ValueError):
    """A start-up error in the configuration; its message names the source and the field."""


@dataclass(frozen=True)
class AgentSettings:
    agent_id: str
    token: str
    ttl_days: int = SESSION_TTL_DEFAULT_DAYS
    context: Mapping[str, Any] = field(default_factory=dict)
    """Handed (deep-copied) to each new session of the agent."""


@dataclass(frozen=True)
class HealthSettings:
    port: int
    path: str
    host: str


@dataclass(frozen=True)
class ResolvedConfig:
    """The configuration with every default applied."""

    url: str
    """The agent endpoint, `{base_url}/ws/agent`."""
    reconnect: ReconnectPolicy
    agents: tuple[AgentSettings, ...]
    health: HealthSettings | None = None


AGENT_PATH = ENDPOINT_PATHS["agent"][ENDPOINT_PATHS["agent"].index("/ws/") :]
"""`/ws/agent`: what follows the bridge's base URL (which ends in the version segment) on the agent endpoint."""


def agent_endpoint(base_url: str) -> str:
    """The agent endpoint of the bridge whose base URL (`wss://host/v1`) is given: `connection.url`."""
    return base_url.rstrip("/") + AGENT_PATH


_REFERENCE = re.compile(r"\$\$|\$\{([^}]*)\}|\$\{")
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _field_path(path: list[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "(root)"


def interpolate_env(
    value: object, env: Mapping[str, str], source: str = "the configuration", path: list[str | int] | None = None
) -> object:
    """Replaces every `${VAR}` in every string value of `value` (recursively) with the environment's value; `$$`
    writes a `$` (so `$${` a literal `${`). A variable that is unset or empty is an error naming it and the field,
    so a token can never silently become an empty string."""
    at: list[str | int] = path or []
    if isinstance(value, str):

        def replace(match: re.Match[str]) -> str:
            if match.group(0) == "$$":
                return "$"
            where = f"{_field_path(at)} in {source}"
            name = match.group(1)
            if name is None:
                raise ConnectorConfigError(f"{where}: unclosed ${{ reference (write $${{ for a literal ${{)")
            if not _VARIABLE_NAME.fullmatch(name):
                raise ConnectorConfigError(f"{where}: ${{{name}}} is not a valid environment variable name")
            resolved = env.get(name)
            if not resolved:
                state = "not set" if resolved is None else "empty"
                raise ConnectorConfigError(f"{where}: environment variable {name} is {state} (referenced as ${{{name}}})")
            return resolved

        return _REFERENCE.sub(replace, value)
    if isinstance(value, list):
        return [interpolate_env(item, env, source, [*at, i]) for i, item in enumerate(value)]
    if isinstance(value, Mapping):
        return {k: interpolate_env(v, env, source, [*at, str(k)]) for k, v in value.items()}
    return value


def _cross_check(config: ConnectorConfig, source: str) -> None:
    """What the schema cannot say: each token belongs to its agent, no agent is listed twice."""
    seen: set[str] = set()
    for i, agent in enumerate(config.agents):
        if agent.agent_id in seen:
            raise ConnectorConfigError(
                f"agents[{i}].agent_id in {source}: {agent.agent_id} is listed twice (one connection per agent)"
            )
        seen.add(agent.agent_id)
        # rla_{agent_id}_{secret}; ids never contain `_`, so the middle part is the token's agent.
        parts = agent.token.split("_")
        owner = parts[1] if len(parts) > 1 else ""
        if owner != agent.agent_id:
            raise ConnectorConfigError(
                f"agents[{i}].token in {source}: the token belongs to agent {owner}, not {agent.agent_id}"
            )
    r = config.connection.reconnect
    if r is not None and r.base_delay_ms is not None and r.max_delay_ms is not None and r.base_delay_ms > r.max_delay_ms:
        raise ConnectorConfigError(
            f"connection.reconnect in {source}: baseDelayMs ({r.base_delay_ms}) is above maxDelayMs ({r.max_delay_ms})"
        )


def _first(*values: Any) -> Any:
    return next(v for v in values if v is not None)


def _resolved(config: ConnectorConfig) -> ResolvedConfig:
    r = config.connection.reconnect
    reconnect = ReconnectPolicy(
        enabled=_first(r and r.enabled, True),
        max_retries=_first(r and r.max_retries, CONNECTOR_RECONNECT_MAX_ATTEMPTS),
        base_delay_ms=_first(r and r.base_delay_ms, RECONNECT_BASE_DELAY_MS),
        max_delay_ms=_first(r and r.max_delay_ms, RECONNECT_MAX_DELAY_MS),
    )
    agents = tuple(
        AgentSettings(
            agent_id=a.agent_id,
            token=a.token,
            ttl_days=_first(a.ttl_days, SESSION_TTL_DEFAULT_DAYS),
            context=dict(a.context or {}),
        )
        for a in config.agents
    )
    h = config.health
    health = None if h is None else HealthSettings(port=h.port, path=h.path, host=h.host)
    return ResolvedConfig(url=config.connection.url, reconnect=reconnect, agents=agents, health=health)


def resolve_config(
    document: object, *, env: Mapping[str, str] | None = None, source: str = "the configuration"
) -> ResolvedConfig:
    """Interpolates, checks and completes an already parsed configuration document (a dict)."""
    interpolated = interpolate_env(document, os.environ if env is None else env, source)
    if not isinstance(interpolated, Mapping):
        raise ConnectorConfigError(f"invalid connector configuration in {source}: it must be an object")
    try:
        config = ConnectorConfig.from_json(interpolated)
    except MessageError as err:
        raise ConnectorConfigError(f"invalid connector configuration in {source}: {err}") from None
    _cross_check(config, source)
    return _resolved(config)


def parse_config(
    text: str, *, format: str = "yaml", env: Mapping[str, str] | None = None, source: str = "the configuration"
) -> ResolvedConfig:
    """Parses configuration text: JSON when `format` is "json", otherwise YAML (which needs PyYAML)."""
    try:
        if format == "json":
            document: object = json.loads(text)
        else:
            document = _yaml_load(text, source)
    except ValueError as err:
        raise ConnectorConfigError(f"{source} is not valid {format.upper()}: {err}") from None
    return resolve_config(document, env=env, source=source)


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any], env: Mapping[str, str] | None = None
) -> ResolvedConfig:
    """A configuration from a dict, or from a file (`.json` as JSON, anything else as YAML)."""
    if isinstance(source, Mapping):
        return resolve_config(source, env=env)
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConnectorConfigError(f"cannot read the connector configuration {path}: {err.strerror or err}") from None
    return parse_config(text, format="json" if path.suffix.lower() == ".json" else "yaml", env=env, source=str(path))


def _yaml_load(text: str, source: str) -> object:
    try:
        yaml: Any = importlib.import_module("yaml")
    except ImportError:
        raise ConnectorConfigError(
            f"{source} is YAML, which needs PyYAML (pip install PyYAML, or Debian's python3-yaml); "
            "a JSON file or a dict needs nothing"
        ) from None
    try:
        document: object = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ValueError(str(err)) from None
    return document
