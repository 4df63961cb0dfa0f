"""Frames as the bridge reads them: one compact JSON text per WebSocket message."""

from __future__ import annotations

import json
from typing import Any


def dumps(frame: dict[str, Any]) -> str:
    """Compact JSON in UTF-8 where it can be; a string holding a lone surrogate (which UTF-8 cannot carry) makes
    the whole frame ASCII with escapes instead, as JSON.stringify would write it."""
    text = json.dumps(frame, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(frame, separators=(",", ":"))
    return text


def json_bytes(value: object) -> int:
    """UTF-8 bytes of `value`'s compact JSON, as the bridge measures payloads and frames."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))
