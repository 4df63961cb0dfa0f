"""Python client of the agent messaging bridge: the agent connector and the app client (asyncio, websockets)."""

from ._generated.messages import AgentReplyMetadata, AgentSummary, MessageError, ReplyMessage
from .app_client import AppCallbacks, AppClient, DiscoveredAgents, connect_app
from .app_errors import BridgeError, ConnectionLostError, EventCancelledError, StreamGapError
from .backoff import ReconnectPolicy, backoff_delay_ms
from .clock import Clock, ScaledClock, SystemClock, scaled_clock
from .config import AgentSettings, ConnectorConfigError, HealthSettings, ResolvedConfig, agent_endpoint, load_config, parse_config
from .connection import CloseInfo
from .connector import Connector, ConnectorStartError
from .event_handle import Accepted, EventHandle
from .fragments import split_by_bytes, split_words
from .handler import AgentEvent, AgentFailure, Handler, Reply
from .health import HealthServerError
from .notifications import (
    Closed,
    Connected,
    ConnectorCallbacks,
    CutShort,
    Disconnected,
    EventCancelled,
    EventError,
    EventReceived,
    EventReplied,
    Reconnecting,
    Stopped,
)
from .sessions import AgentSession

__all__ = [
    "Accepted",
    "AgentEvent",
    "AgentFailure",
    "AgentReplyMetadata",
    "AgentSession",
    "AgentSettings",
    "AgentSummary",
    "AppCallbacks",
    "AppClient",
    "BridgeError",
    "Clock",
    "CloseInfo",
    "Closed",
    "Connected",
    "ConnectionLostError",
    "Connector",
    "ConnectorCallbacks",
    "ConnectorConfigError",
    "ConnectorStartError",
    "CutShort",
    "Disconnected",
    "DiscoveredAgents",
    "EventCancelled",
    "EventCancelledError",
    "EventError",
    "EventHandle",
    "EventReceived",
    "EventReplied",
    "Handler",
    "HealthServerError",
    "HealthSettings",
    "MessageError",
    "Reconnecting",
    "ReconnectPolicy",
    "Reply",
    "ReplyMessage",
    "ResolvedConfig",
    "ScaledClock",
    "Stopped",
    "StreamGapError",
    "SystemClock",
    "agent_endpoint",
    "backoff_delay_ms",
    "connect_app",
    "load_config",
    "parse_config",
    "scaled_clock",
    "split_by_bytes",
    "split_words",
]
