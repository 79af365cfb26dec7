"""Structured output: what a prompt must return (`Agent(output_type=...)`), checked, and
the `StructuredOutput` tool the model returns it through (docs/structured-output.md).

`OutputSchema.of(X)` compiles X once: a pydantic model, a dataclass or a TypedDict through
pydantic's `TypeAdapter` (its JSON Schema, its validation: the value is an instance of X),
or a JSON Schema dict through `jsonschema` (the value is the dict). A schema that cannot
work is a `ConfigError` before the first request. `OutputSchema.check(value)` is pure: the
validated value, or the error the model is sent back.

The tool is Claude Code's (`--json-schema`): a tool named `StructuredOutput` whose input
schema is the output schema. It is one more tool in the tools array, so it works with every
provider and keeps the request prefix byte-identical; the loop ends the prompt when it was
called with valid input (`loop.query`), after its tool_result is recorded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

from ..errors import ConfigError
from .base import BaseTool, ToolContext, ToolError, ToolProgress, ToolResult
from .output import format_validation_error

OUTPUT_TOOL_NAME = "StructuredOutput"
"""Claude Code's name for the tool (`--json-schema`); `queryloop.testing` scripts call it."""

OUTPUT_TOOL_DESCRIPTION = (
    "Use this tool to return your final response in the requested structured format. "
    "You MUST call this tool exactly once, at the end, with your final answer as its input; "
    "the input must match the schema."
)

ACCEPTED_TEXT = "Structured output provided successfully"
"""The tool_result of a valid call (the conversation goes on validly at the next prompt)."""

_MAX_REPORTED_ERRORS = 10

if TYPE_CHECKING:
    import jsonschema

# jsonschema and referencing (with attrs and rpds) are imported where a JSON Schema dict is
# checked: every session builds this module, few give a schema dict, and `-p` must not pay
# for them before its first request (docs/benchmarks.md, start-up).


def _validator_class(schema: Mapping[str, Any]) -> type[jsonschema.protocols.Validator]:
    """The validator of the schema's own dialect, else 2020-12 (the Messages API's)."""
    import jsonschema

    return jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator)


@dataclass(frozen=True, slots=True)
class Accepted:
    """The value validated: an instance of the output type (a dict for a JSON Schema)."""

    value: Any


@dataclass(frozen=True, slots=True)
class Rejected:
    """The value does not match: `error` is what the model is told."""

    error: str


class OutputSchema:
    """An output type compiled once: the JSON Schema the model sees and the validator."""

    def __init__(
        self,
        schema: dict[str, Any],
        adapter: TypeAdapter[Any] | None,
        validator: jsonschema.protocols.Validator | None,
    ) -> None:
        self.schema = schema
        """The tool's input schema (a JSON object at its root)."""
        self._adapter = adapter
        self._validator = validator

    @classmethod
    def of(cls, output_type: object) -> OutputSchema:
        """Compile `output_type`: a JSON Schema dict, else a type pydantic can validate.

        Raises:
            ConfigError: not a JSON Schema (or not an object at its root), a `$ref` that
                does not resolve inside the schema, or a type pydantic cannot describe.
        """
        if isinstance(output_type, Mapping):
            schema = _checked_schema(dict(output_type))
            return cls(schema, None, _validator_class(schema)(schema))
        if not isinstance(output_type, type):
            raise ConfigError(
                f"output_type: {output_type!r} is neither a type (a pydantic model, a "
                "dataclass, a TypedDict) nor a JSON Schema dict"
            )
        try:
            adapter: TypeAdapter[Any] = TypeAdapter(output_type)
            schema = adapter.json_schema()
        except (PydanticSchemaGenerationError, PydanticUserError) as exc:
            raise ConfigError(
                f"output_type: pydantic cannot describe {output_type!r}: {exc}"
            ) from None
        return cls(_checked_schema(_inline_root_ref(schema)), adapter, None)

    def check(self, value: Any) -> Accepted | Rejected:
        """The validated value, or the error for the model. A value wrapped in one key
        (`{"output": {...}}`) is unwrapped only when it fails as given and its one value
        passes (models do wrap it; Claude Code accepts that too)."""
        first = self._check(value)
        if isinstance(first, Accepted):
            return first
        if isinstance(value, Mapping) and len(value) == 1:
            inner = self._check(next(iter(value.values())))
            if isinstance(inner, Accepted):
                return inner
        return first

    def _check(self, value: Any) -> Accepted | Rejected:
        if self._adapter is not None:
            try:
                return Accepted(self._adapter.validate_python(value))
            except ValidationError as exc:
                return Rejected(format_validation_error(OUTPUT_TOOL_NAME, exc))
        assert self._validator is not None
        errors = sorted(self._validator.iter_errors(value), key=lambda e: list(e.path))
        if not errors:
            return Accepted(value)
        lines = [f"- {_where(e.absolute_path)}: {e.message}" for e in errors]
        shown = "\n".join(lines[:_MAX_REPORTED_ERRORS])
        return Rejected(f"Output does not match the required schema:\n{shown}")


def _where(path: Iterator[Any] | Any) -> str:
    parts = [str(p) for p in path]
    return "/" + "/".join(parts) if parts else "the output"


def _checked_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` if it can be a tool's input schema: a valid JSON Schema (its own dialect,
    else 2020-12) with an object at its root, whose every `$ref` resolves inside it."""
    from jsonschema.exceptions import SchemaError
    from referencing import Registry
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012

    try:
        _validator_class(schema).check_schema(schema)
    except SchemaError as exc:
        raise ConfigError(f"output_type: not a valid JSON Schema: {exc.message}") from None
    if schema.get("type") != "object":
        raise ConfigError(
            'output_type: the schema\'s root must be an object (`"type": "object"`): the '
            "model returns it as a tool's input; put a list or a scalar in a property"
        )
    resource = DRAFT202012.create_resource(schema)
    resolver = Registry().with_resource("", resource).resolver()
    for ref in _refs(schema):
        try:
            resolver.lookup(ref)
        except Unresolvable:
            raise ConfigError(
                f"output_type: the schema's $ref {ref!r} does not resolve inside the schema "
                "(give it in `$defs`; nothing is fetched)"
            ) from None
    return schema


def _refs(node: Any) -> Iterator[str]:
    """Every `$ref` in a schema, depth first."""
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref
        for child in node.values():
            yield from _refs(child)
    elif isinstance(node, list):
        for child in node:
            yield from _refs(child)


def _inline_root_ref(schema: dict[str, Any]) -> dict[str, Any]:
    """pydantic describes a self-referencing model as `{"$ref": "#/$defs/X", "$defs": ...}`;
    a tool's input schema needs the object itself at the root, so X is put there."""
    ref, defs = schema.get("$ref"), schema.get("$defs")
    prefix = "#/$defs/"
    if not (isinstance(ref, str) and ref.startswith(prefix) and isinstance(defs, dict)):
        return schema
    target = defs.get(ref.removeprefix(prefix))
    if not isinstance(target, dict):
        return schema
    return {**target, "$defs": defs}


class _AnyInput(BaseModel):
    """The tool's input as the model sent it: the output schema checks it, not pydantic."""

    model_config = ConfigDict(extra="allow")


class StructuredOutputTool(BaseTool[_AnyInput]):
    """`StructuredOutput`: the model returns the prompt's value by calling it. Read-only and
    safe in parallel (it changes nothing), so no mode or rule stops it."""

    name = OUTPUT_TOOL_NAME
    description = OUTPUT_TOOL_DESCRIPTION
    input_model: type[BaseModel] = _AnyInput
    read_only = True
    concurrency_safe = True

    def __init__(self, output: OutputSchema) -> None:
        self.output = output

    def input_schema(self) -> dict[str, Any]:
        return self.output.schema

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        verdict = self.output.check(input.model_dump())
        if isinstance(verdict, Rejected):
            raise ToolError(f"{verdict.error}\nCall {OUTPUT_TOOL_NAME} again with a valid value.")
        yield ToolResult(ACCEPTED_TEXT)
