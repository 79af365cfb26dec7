"""The session services a tool reaches are typed fields of its ToolContext (issue 20.3):
no string keys, and `tools/` imports nothing of the packages that provide them."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest
from tools_test_support import call

from queryloop.abort import AbortSignal
from queryloop.agents.runner import child_context
from queryloop.agents.tool import AgentTool, subagent_host
from queryloop.tasks import TaskManager
from queryloop.tools import ToolContext, ToolError
from queryloop.tools.builtin import PROVIDED_ELSEWHERE, GlobTool, GrepTool, LSTool
from queryloop.tools.services import FileTextSnapshot

SRC = Path(__file__).resolve().parents[2] / "src" / "queryloop"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "secret.txt").write_text("token = hunter2\n")
    (tmp_path / "notes.txt").write_text("token = public\n")
    return tmp_path


class _HideSecret:
    def hides(self, cwd: Path) -> Callable[[Path], bool] | None:
        return lambda path: path.name == "secret.txt"


async def test_grep_glob_and_ls_skip_what_the_hidden_paths_field_hides(project: Path) -> None:
    ctx = ToolContext(cwd=project, hidden_paths=_HideSecret())
    grep = await call(GrepTool(), {"pattern": "token", "output_mode": "content"}, ctx)
    assert "public" in grep.text and "hunter2" not in grep.text
    glob = await call(GlobTool(), {"pattern": "*.txt"}, ctx)
    assert "notes.txt" in glob.text and "secret.txt" not in glob.text
    ls = await call(LSTool(), {"path": str(project)}, ctx)
    assert "notes.txt" in ls.text and "secret.txt" not in ls.text
    shown = ToolContext(cwd=project)  # no predicate: nothing hidden
    assert "secret.txt" in (await call(GlobTool(), {"pattern": "*.txt"}, shown)).text


def test_a_subagent_context_keeps_the_services_and_copies_the_state(tmp_path: Path) -> None:
    tasks = TaskManager(None)
    hidden = _HideSecret()
    parent = ToolContext(
        cwd=tmp_path, tasks=tasks, loaded_deferred_tools=["mcp__a__b"], hidden_paths=hidden
    )
    parent.file_snapshots["a.txt"] = FileTextSnapshot(1, 2, "hi")
    parent.todos.append({"content": "parent's", "status": "pending"})
    child = child_context(parent, AbortSignal())
    assert child.tasks is tasks  # one task manager per session
    assert child.hidden_paths is hidden and child.grants is parent.grants  # session services
    assert child.todos == []  # the subagent keeps its own list
    assert child.loaded_deferred_tools == ["mcp__a__b"]
    child.loaded_deferred_tools.append("mcp__c__d")  # the child's loads are its own
    assert parent.loaded_deferred_tools == ["mcp__a__b"]
    assert child.subagents is None and child.agent_id is None  # the runner sets its own
    assert child.file_snapshots == parent.file_snapshots
    assert child.file_snapshots is not parent.file_snapshots


def test_the_agent_tool_reads_its_host_from_the_typed_field(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="not available"):
        subagent_host(ToolContext(cwd=tmp_path))
    assert AgentTool.name == "Agent"
    assert tuple(AgentTool.aliases) == PROVIDED_ELSEWHERE["Agent"]


def _string_key_uses(path: Path) -> list[str]:
    """`x.extras[...]`, `x.extras.get(...)` and `x.extras.setdefault(...)` in one module."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        target = node.value if isinstance(node, ast.Subscript) else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("get", "setdefault", "pop"):
                target = node.func.value
        if isinstance(target, ast.Attribute) and target.attr == "extras":
            found.append(f"{path.relative_to(SRC)}:{target.lineno}")
    return found


def test_no_service_of_ours_travels_as_a_string_key() -> None:
    uses = [use for module in sorted(SRC.rglob("*.py")) for use in _string_key_uses(module)]
    assert uses == []


def test_tools_imports_nothing_above_it() -> None:
    allowed = {"tools", "messages", "tasks", "providers", "sandbox", "errors", "abort"}
    reached: dict[str, set[str]] = {}
    for module in (SRC / "tools").rglob("*.py"):
        depth = len(module.relative_to(SRC).parts) - 1
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level > depth:
                top = (node.module or "").split(".")[0]
                reached.setdefault(top, set()).add(str(module.relative_to(SRC)))
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("queryloop."):
                top = (node.module or "").split(".")[1]
                reached.setdefault(top, set()).add(str(module.relative_to(SRC)))
    assert {pkg: files for pkg, files in reached.items() if pkg not in allowed} == {}
