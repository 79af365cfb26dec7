"""Stand-in tools with Claude Code's names, so checker tests do not depend on the built-ins."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from queryloop.tools.base import BaseTool


class BashInput(BaseModel):
    command: str


class PathInput(BaseModel):
    file_path: str
    content: str = ""


class SearchInput(BaseModel):
    pattern: str = "x"
    path: str | None = None


class FakeBash(BaseTool[BashInput]):
    name = "Bash"
    input_model = BashInput

    def permission_subject(self, input: Any) -> str | None:
        return str(input.command)


class _FileTool(BaseTool[PathInput]):
    input_model = PathInput

    def permission_subject(self, input: Any) -> str | None:
        return str(input.file_path)


class FakeRead(_FileTool):
    name = "Read"
    read_only = True


class FakeEdit(_FileTool):
    name = "Edit"


class FakeWrite(_FileTool):
    name = "Write"


class FakeGrep(BaseTool[SearchInput]):
    name = "Grep"
    input_model = SearchInput
    read_only = True

    def permission_subject(self, input: Any) -> str | None:
        return input.path


class FakeMcp(BaseTool[BaseModel]):
    name = "mcp__github__create_issue"


class FakeReadOnlyBash(FakeBash):
    """Bash whose command was judged read-only (as the built-in does for `cat`, `ls`, …)."""

    read_only = True
