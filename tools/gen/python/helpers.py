# The checks messages.py's from_json methods are made of: copied verbatim into messages.py below the line that
# follows (the lines above it only make this file a module that mypy and python can read on its own).
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

# ---- copied into messages.py from here ----
_T = TypeVar("_T")


class MessageError(ValueError):
    """A frame (or a configuration) that does not fit the spec's schema: `field` is the dotted path of the value
    at fault ("" for the whole message), `reason` says what is wrong with it."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field = field
        self.reason = reason


class UnknownMessageType(MessageError):
    """A frame whose `type` this version of the package does not know: clients ignore such frames (decision C2)."""


def _at(path: str, key: str | int) -> str:
    return f"{path}.{key}" if path else str(key)


def _object(data: object, path: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise MessageError(path, "must be a JSON object")
    return data


def _required(data: Mapping[str, Any], key: str, path: str, parse: Callable[[object, str], _T]) -> _T:
    if key not in data:
        raise MessageError(_at(path, key), "is required")
    return parse(data[key], _at(path, key))


def _optional(data: Mapping[str, Any], key: str, path: str, parse: Callable[[object, str], _T]) -> _T | None:
    # A null stands for an absent optional field: what a client makes of it is the same.
    value = data.get(key)
    return None if value is None else parse(value, _at(path, key))


def _defaulted(
    data: Mapping[str, Any], key: str, path: str, parse: Callable[[object, str], _T], default: Callable[[], _T]
) -> _T:
    value = data.get(key)
    return default() if value is None else parse(value, _at(path, key))


def _const(data: Mapping[str, Any], key: str, expected: object, path: str, *, required: bool) -> bool:
    """Whether `key` holds `expected` (False when it is absent and may be); raises when it holds anything else."""
    if key not in data or data[key] is None:
        if required:
            raise MessageError(_at(path, key), "is required")
        return False
    value = data[key]
    if type(value) is not type(expected) or value != expected:
        raise MessageError(_at(path, key), f"must be {expected!r}")
    return True


def _closed(data: Mapping[str, Any], keys: tuple[str, ...], path: str) -> None:
    for key in data:
        if key not in keys:
            raise MessageError(_at(path, key), "is not a known field")


def _string(
    value: object,
    path: str,
    *,
    min_length: int | None = None,
    max_length: int | None = None,
    pattern: re.Pattern[str] | None = None,
) -> str:
    if not isinstance(value, str):
        raise MessageError(path, "must be a string")
    if min_length is not None and len(value) < min_length:
        raise MessageError(path, f"must be at least {min_length} characters")
    if max_length is not None and len(value) > max_length:
        raise MessageError(path, f"must be at most {max_length} characters")
    if pattern is not None and not pattern.search(value):
        raise MessageError(path, f"must match {pattern.pattern}")
    return value


def _bounded(value: float, path: str, minimum: float | None, maximum: float | None, above: float | None) -> None:
    if minimum is not None and value < minimum:
        raise MessageError(path, f"must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise MessageError(path, f"must be at most {maximum}")
    if above is not None and value <= above:
        raise MessageError(path, f"must be more than {above}")


def _integer(
    value: object, path: str, *, minimum: int | None = None, maximum: int | None = None, above: int | None = None
) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise MessageError(path, "must be an integer")
    _bounded(value, path, minimum, maximum, above)
    return value


def _number(
    value: object,
    path: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise MessageError(path, "must be a number")
    _bounded(value, path, minimum, maximum, above)
    return value


def _boolean(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise MessageError(path, "must be true or false")
    return value


def _enum(value: object, path: str, options: tuple[_T, ...]) -> _T:
    for option in options:
        if value == option and type(value) is type(option):
            return option
    raise MessageError(path, f"must be one of {', '.join(map(str, options))}")


def _dict(value: object, path: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise MessageError(path, "must be a JSON object")
    return dict(value)


def _list(value: object, path: str, *, min_items: int | None = None) -> list[Any]:
    if not isinstance(value, list):
        raise MessageError(path, "must be a list")
    if min_items is not None and len(value) < min_items:
        raise MessageError(path, f"must have at least {min_items} items")
    return value


def _list_of(value: object, path: str, parse: Callable[[object, str], _T], *, min_items: int | None = None) -> list[_T]:
    return [parse(item, _at(path, i)) for i, item in enumerate(_list(value, path, min_items=min_items))]


def _dict_of(value: object, path: str, parse: Callable[[object, str], _T]) -> dict[str, _T]:
    return {key: parse(item, _at(path, key)) for key, item in _dict(value, path).items()}


def _dispatch(data: object, parsers: Mapping[str, Callable[[Mapping[str, Any]], _T]]) -> _T:
    message = _object(data, "")
    kind = message.get("type")
    if not isinstance(kind, str):
        raise MessageError("type", "is required" if kind is None else "must be a string")
    parse = parsers.get(kind)
    if parse is None:
        raise UnknownMessageType("type", f"unknown message type {kind!r} (known: {', '.join(parsers)})")
    return parse(message)

