"""MultiEdit: several exact replacements in one file, applied atomically."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ._common import StrictInput
from ._edits import Replacement
from .edit import FileEditTool

DESCRIPTION = """Makes several exact string replacements in one file in a single, atomic step.

- Same rules as Edit for each entry: Read the file first; old_string must match exactly (no
  line-number prefixes) and be unique unless replace_all is true.
- Edits apply in order, each to the result of the previous one.
- If any edit fails, none is applied and the file is left unchanged.
- Prefer this over several Edit calls on the same file."""


class EditSpec(StrictInput):
    old_string: str = Field(description="The exact text to replace")
    new_string: str = Field(description="The text to replace it with")
    replace_all: bool = Field(default=False, description="Replace every occurrence")


class MultiEditInput(StrictInput):
    file_path: str = Field(description="The file to modify (absolute or relative to the cwd)")
    edits: list[EditSpec] = Field(min_length=1, description="The edits, applied in order")


class MultiEditTool(FileEditTool):
    """The MultiEdit tool."""

    name = "MultiEdit"
    description = DESCRIPTION
    input_model: type[BaseModel] = MultiEditInput

    def replacements(self, input: Any) -> list[Replacement]:
        return [Replacement(e.old_string, e.new_string, e.replace_all) for e in input.edits]
