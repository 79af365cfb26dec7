"""@tool: functions become tools with a schema from hints and docstrings."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Annotated, Literal

import pytest
from pydantic import Field
from tools_test_support import call

from queryloop.tools import FunctionTool, ToolContext, ToolError, ToolResult, tool
from queryloop.tools.decorator import parse_docstring


@tool
def add(a: int, b: int = 2) -> int:
    """Add two integers.

    Use it for arithmetic the model should not do in its head.

    Args:
        a: The first number.
        b: The second number,
            added to the first.

    Returns:
        The sum.
    """
    return a + b


@tool(name="shout", description="Upper-case a text.", read_only=True)
async def loud(
    text: Annotated[str, Field(min_length=1, description="What to shout")],
    mode: Literal["caps", "title"] = "caps",
) -> str:
    return text.upper() if mode == "caps" else text.title()


def test_schema_and_description_from_signature_and_docstring() -> None:
    assert isinstance(add, FunctionTool) and add.name == "add"
    assert add.description == (
        "Add two integers.\n\nUse it for arithmetic the model should not do in its head."
    )
    schema = add.input_schema()
    assert schema["type"] == "object" and schema["required"] == ["a"]
    assert schema["properties"]["a"]["description"] == "The first number."
    assert schema["properties"]["b"]["description"] == "The second number, added to the first."
    assert schema["properties"]["b"]["default"] == 2
    assert add(1, 2) == 3  # still callable directly
    assert not add.is_concurrency_safe(None) and not add.is_read_only(None)


def test_options_and_annotated_fields() -> None:
    assert loud.name == "shout" and loud.description == "Upper-case a text."
    assert loud.is_read_only(None) and loud.is_concurrency_safe(None)
    props = loud.input_schema()["properties"]
    assert props["text"]["minLength"] == 1 and props["text"]["description"] == "What to shout"
    assert props["mode"]["enum"] == ["caps", "title"]


def test_rest_docstring() -> None:
    prose, params = parse_docstring(
        """Fetch a page.

        :param url: The address.
        :param int timeout: Seconds to wait.
        :returns: The body.
        """
    )
    assert prose == "Fetch a page."
    assert params == {"url": "The address.", "timeout": "Seconds to wait."}


async def test_sync_function_runs_in_a_worker_thread(ctx: ToolContext) -> None:
    threads: list[int] = []

    @tool
    def where() -> str:
        """Say where it ran."""
        threads.append(threading.get_ident())
        return "here"

    got = await call(where, {}, ctx)
    assert got.text == "here" and threads and threads[0] != threading.get_ident()


async def test_async_function_and_defaults(ctx: ToolContext) -> None:
    assert (await call(loud, {"text": "hi"}, ctx)).text == "HI"
    assert (await call(loud, {"text": "hi there", "mode": "title"}, ctx)).text == "Hi There"
    assert (await call(add, {"a": 40}, ctx)).text == "42"


async def test_validation_errors_are_actionable(ctx: ToolContext) -> None:
    got = await call(loud, {"text": "", "volume": 11}, ctx)
    assert got.is_error
    assert "`text`" in got.text and "unexpected parameter `volume`" in got.text


@dataclass
class Point:
    x: int
    y: int


async def test_return_values_are_rendered(ctx: ToolContext) -> None:
    @tool
    def point() -> Point:
        """A point."""
        return Point(1, 2)

    @tool
    def mapping() -> dict[str, list[int]]:
        """A mapping."""
        return {"a": [1]}

    @tool
    def passthrough() -> ToolResult:
        """A prepared result."""
        return ToolResult(content="custom", is_error=True)

    assert (await call(point, {}, ctx)).text == '{"x":1,"y":2}'
    assert (await call(mapping, {}, ctx)).text == '{"a":[1]}'
    got = await call(passthrough, {}, ctx)
    assert (got.text, got.is_error) == ("custom", True)


async def test_exceptions_become_error_results(ctx: ToolContext) -> None:
    @tool
    def broken(x: int) -> str:
        """Always fails."""
        raise ValueError(f"bad x {x}")

    @tool
    async def refuses() -> str:
        """Refuses politely."""
        raise ToolError("try again later")

    got = await call(broken, {"x": 3}, ctx)
    assert got.is_error and got.text == "Error: ValueError: bad x 3"
    assert (await call(refuses, {}, ctx)).text == "try again later"


async def test_tool_context_parameter_is_injected_not_exposed(ctx: ToolContext) -> None:
    @tool
    def remember(note: str, context: ToolContext) -> str:
        """Store a note in the session."""
        context.extras["notes.last"] = note
        return "ok"

    assert list(remember.input_schema()["properties"]) == ["note"]
    assert (await call(remember, {"note": "n1"}, ctx)).text == "ok"
    assert ctx.extras["notes.last"] == "n1"


def test_var_args_are_rejected() -> None:
    with pytest.raises(TypeError, match="list each parameter"):

        @tool
        def anything(*args: int) -> None:
            """Nope."""


def test_invalid_tool_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="Invalid tool name"):

        @tool(name="has space")
        def spaced() -> str:
            """Nope."""
            return ""


async def test_sync_callable_returning_a_coroutine_is_awaited(ctx: ToolContext) -> None:
    class Greeter:
        __name__ = "greet"
        __doc__ = "Greet someone."

        async def __call__(self, who: str) -> str:
            return f"hi {who}"

    got = await call(tool(Greeter()), {"who": "ann"}, ctx)
    assert got.text == "hi ann"


def test_unresolvable_hints_give_a_clear_error() -> None:
    with pytest.raises(TypeError, match="cannot resolve the type hints"):

        @tool
        def uses_local(x: LocalOnly) -> str:  # type: ignore[name-defined]  # noqa: F821
            """Refers to a type that does not exist at module level."""
            return ""
