"""JSON schemas for `@tool` input declarations: `{"a": float}`, a TypedDict, or a JSON
schema itself (the three forms the SDK accepts).

A dict of names to Python types makes every name required; a TypedDict keeps its
`NotRequired` keys optional; `Annotated[T, "text"]` gives a property its description.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, is_typeddict

_SCALARS: Mapping[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_WRAPPERS = ("NotRequired", "Required", "ReadOnly")


def input_schema(declared: Any) -> dict[str, Any]:
    """The JSON schema (type object) for a tool's declared input."""
    if isinstance(declared, Mapping):
        if isinstance(declared.get("type"), str) and "properties" in declared:
            return dict(declared)  # already a JSON schema
        properties = {name: type_schema(kind) for name, kind in declared.items()}
        return {"type": "object", "properties": properties, "required": list(properties)}
    if is_typeddict(declared):
        return _typeddict_schema(declared)
    raise TypeError(
        f"input_schema {declared!r} is not supported: give a dict of names to types "
        '({"a": float}), a TypedDict class, or a JSON schema'
    )


def type_schema(kind: Any) -> dict[str, Any]:
    """The JSON schema of one Python type annotation."""
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if getattr(origin, "_name", None) in _WRAPPERS:
        return type_schema(args[0])
    if origin is typing.Annotated:
        schema = type_schema(args[0])
        text = next((a for a in args[1:] if isinstance(a, str)), None)
        return {**schema, "description": text} if text is not None else schema
    if kind in _SCALARS:
        return {"type": _SCALARS[kind]}
    if origin is typing.Union or isinstance(kind, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            return type_schema(options[0])
        return {"anyOf": [type_schema(a) for a in options]}
    if kind is list or origin is list:
        return {"type": "array", "items": type_schema(args[0])} if args else {"type": "array"}
    if kind is dict or origin is dict:
        return {"type": "object"}
    if is_typeddict(kind):
        return _typeddict_schema(kind)
    raise TypeError(f"cannot describe the type {kind!r} in a tool's input schema")


def _typeddict_schema(cls: Any) -> dict[str, Any]:
    hints = typing.get_type_hints(cls, include_extras=True)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: type_schema(kind) for name, kind in hints.items()},
    }
    # `__required_keys__` misses NotRequired[...] written as a string (a module with
    # `from __future__ import annotations`, before Python 3.12); the resolved hints do not.
    required = set(getattr(cls, "__required_keys__", hints))
    for name, kind in hints.items():
        wrapper = getattr(typing.get_origin(kind), "_name", None)
        if wrapper == "NotRequired":
            required.discard(name)
        elif wrapper == "Required":
            required.add(name)
    if required:
        schema["required"] = sorted(required)
    return schema
