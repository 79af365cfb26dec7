"""`@tool`: a plain sync or async function with type hints and a docstring becomes a Tool.

    @tool
    def add(a: int, b: int = 2) -> int:
        \"\"\"Add two numbers.

        Args:
            a: The first number.
            b: The second number.
        \"\"\"
        return a + b

The name is the function's name; the description is the docstring's prose before its first
section (`Args:`, `Returns:`, ...); the input model is built from the signature (defaults,
`Annotated[..., Field(...)]` and per-parameter docs from Google-style `Args:` or reST
`:param x:` lines). A parameter annotated `ToolContext` receives the call's context and is not
part of the schema. Sync functions run in a worker thread so they never block the event loop.
A `str` return is the result text, a `ToolResult` is passed through, anything else is dumped
as JSON; an exception becomes an is_error result.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
import typing
from collections.abc import AsyncIterator, Callable
from typing import Any, overload

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from .base import (
    PASSTHROUGH,
    BaseTool,
    PermissionDecision,
    ToolContext,
    ToolError,
    ToolProgress,
    ToolResult,
)

_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Returns|Return|Yields|Raises|Examples?|Notes?"
    r"|Attributes)\s*:\s*$"
)
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_REST_PARAM = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_REST_OTHER = re.compile(r"^\s*:(returns?|rtype|raises?|type)\b")
_GOOGLE_ARG = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(description, {parameter: description}) from a Google- or reST-style docstring."""
    lines = inspect.cleandoc(doc or "").splitlines()
    prose: list[str] = []
    params: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if _SECTION.match(line):
            i = _read_section(lines, i, params)
            continue
        rest = _REST_PARAM.match(line)
        if rest:
            params[rest.group(1)] = rest.group(2).strip()
        elif not _REST_OTHER.match(line) and not params:
            prose.append(line)
        i += 1
    return "\n".join(prose).strip(), params


def _read_section(lines: list[str], start: int, params: dict[str, str]) -> int:
    """Read one indented section; collect entries when it is an argument section."""
    is_args = _SECTION.match(lines[start]).group(1) in (  # type: ignore[union-attr]
        "Args",
        "Arguments",
        "Parameters",
        "Params",
    )
    header_indent = len(lines[start]) - len(lines[start].lstrip())
    current: str | None = None
    entry_indent = 0
    i = start + 1
    while i < len(lines):
        line = lines[i]
        indent = len(line) - len(line.lstrip())
        if line.strip() and indent <= header_indent:
            break
        entry = _GOOGLE_ARG.match(line.strip()) if is_args else None
        if entry and (current is None or indent <= entry_indent):
            current, entry_indent = entry.group(1).lstrip("*"), indent
            params[current] = entry.group(2).strip()
        elif is_args and current and line.strip():
            params[current] = f"{params[current]} {line.strip()}".strip()
        i += 1
    return i


def _is_context(annotation: Any) -> bool:
    return annotation is ToolContext or (
        typing.get_origin(annotation) is typing.Annotated
        and typing.get_args(annotation)[0] is ToolContext
    )


def build_input_model(
    fn: Callable[..., Any], model_name: str, param_docs: dict[str, str]
) -> tuple[type[BaseModel], str | None]:
    """A pydantic model for `fn`'s parameters and the name of its ToolContext parameter."""
    # A callable object's hints live on its __call__.
    plain = inspect.isfunction(fn) or inspect.ismethod(fn)
    try:
        hints = typing.get_type_hints(fn if plain else type(fn).__call__, include_extras=True)
    except NameError as exc:
        raise TypeError(
            f"@tool cannot resolve the type hints of {getattr(fn, '__name__', fn)!r} ({exc}); "
            "define the types it uses at module level"
        ) from exc
    fields: dict[str, Any] = {}
    ctx_param: str | None = None
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"@tool cannot expose *{name} of {fn.__name__}; list each parameter")
        annotation = hints.get(name, Any)
        if _is_context(annotation):
            ctx_param = name
            continue
        fields[name] = (annotation, _field_for(param, param_docs.get(name)))
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    return create_model(model_name, __config__=config, **fields), ctx_param


def _field_for(param: inspect.Parameter, doc: str | None) -> FieldInfo:
    default = param.default
    if isinstance(default, FieldInfo):
        if doc and not default.description:
            default.description = doc
        return default
    required = default is inspect.Parameter.empty
    # Pass description only when known, so an Annotated[..., Field(description=...)] wins.
    value = ... if required else default
    info: FieldInfo = Field(default=value, description=doc) if doc else Field(default=value)
    return info


def _to_result(value: Any) -> ToolResult:
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult(content=value)
    if value is None:
        return ToolResult(content="")
    return ToolResult(content=pydantic_core.to_json(value, fallback=str).decode(), data=value)


class FunctionTool(BaseTool[BaseModel]):
    """A Tool wrapping a plain function; build it with `@tool`."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
        concurrency_safe: bool | None = None,
        max_result_chars: int | None = None,
        needs_approval: bool = False,
    ) -> None:
        self.fn = fn
        self.needs_approval = needs_approval
        self.name = name or fn.__name__
        if not _TOOL_NAME.fullmatch(self.name):
            raise ValueError(
                f"Invalid tool name {self.name!r}: use 1-64 letters, digits, '_' or '-'"
            )
        prose, docs = parse_docstring(fn.__doc__)
        self.description = description or prose or self.name
        model_name = "".join(p.capitalize() for p in self.name.split("_")) + "Input"
        self.input_model, self._ctx_param = build_input_model(fn, model_name, docs)
        self._is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            type(fn).__call__
        )
        self.read_only = read_only
        self.concurrency_safe = read_only if concurrency_safe is None else concurrency_safe
        if max_result_chars is not None:
            self.max_result_chars = max_result_chars
        functools.update_wrapper(self, fn)

    async def check_permissions(self, input: Any, ctx: ToolContext) -> PermissionDecision:
        if self.needs_approval:
            return PermissionDecision("ask", f"{self.name} asks for approval before each call")
        return PASSTHROUGH

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the wrapped function directly (handy in tests)."""
        return self.fn(*args, **kwargs)

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        kwargs = {name: getattr(input, name) for name in type(input).model_fields}
        if self._ctx_param is not None:
            kwargs[self._ctx_param] = ctx
        try:
            if self._is_async:
                value = await self.fn(**kwargs)
            else:
                value = await asyncio.to_thread(self.fn, **kwargs)
                if inspect.isawaitable(value):  # a callable object with an async __call__
                    value = await value
        except ToolError as exc:
            value = ToolResult(content=str(exc), is_error=True)
        except Exception as exc:  # reported to the model, never raised into the loop
            value = ToolResult(content=f"Error: {type(exc).__name__}: {exc}", is_error=True)
        yield _to_result(value)


@overload
def tool(fn: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    concurrency_safe: bool | None = None,
    max_result_chars: int | None = None,
    needs_approval: bool = False,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    concurrency_safe: bool | None = None,
    max_result_chars: int | None = None,
    needs_approval: bool = False,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Turn a function into a Tool. Use bare (`@tool`) or with options (`@tool(name=...)`).

    `concurrency_safe` defaults to `read_only`: a tool that changes nothing may run in
    parallel with other safe tools. A tool passed to `Agent(tools=[...])` runs without
    asking; `needs_approval=True` makes every call ask first (the REPL's prompt, or the
    Agent's `can_use_tool`; refused when nobody can answer).
    """

    def wrap(f: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(
            f,
            name=name,
            description=description,
            read_only=read_only,
            concurrency_safe=concurrency_safe,
            max_result_chars=max_result_chars,
            needs_approval=needs_approval,
        )

    return wrap(fn) if fn is not None else wrap
