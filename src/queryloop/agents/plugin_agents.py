"""The subagent types plugins bring: `agents/*.md` (or the manifest's `agents` paths) of each
loaded plugin, named `<plugin>:<name>` (Claude Code: "the agent `agent-creator` for the
plugin with name `plugin-dev` will appear as `plugin-dev:agent-creator`"), with
`${CLAUDE_PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_DATA}` substituted in their prompts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..config.discovery import FileScope, FoundFile, markdown_files
from ..config.plugins import Plugin
from .definitions import AgentDefinition, read_agent_file


def plugin_agents(plugins: Sequence[Plugin]) -> tuple[list[AgentDefinition], list[str]]:
    """The plugins' agent definitions, and notices for files that could not be used."""
    found: list[AgentDefinition] = []
    notices: list[str] = []
    for plugin in plugins:
        for file, folders in _agent_files(plugin.agents):
            definition, problems = read_agent_file(FoundFile(file, FileScope.PLUGIN))
            notices.extend(problems)
            if definition is not None:
                found.append(_namespaced(definition, plugin, folders))
    return found, notices


def _agent_files(paths: Sequence[Path]) -> list[tuple[Path, tuple[str, ...]]]:
    """Each agent file and the subfolders between its agents folder and it."""
    files: list[tuple[Path, tuple[str, ...]]] = []
    for path in paths:
        if path.is_file():
            files.append((path, ()))
            continue
        files += [(f, f.relative_to(path).parts[:-1]) for f in markdown_files(path)]
    return files


def _namespaced(
    definition: AgentDefinition, plugin: Plugin, folders: tuple[str, ...]
) -> AgentDefinition:
    prompt = definition.prompt
    for name, value in plugin.variables.items():
        prompt = prompt.replace("${" + name + "}", value)
    name = ":".join((plugin.name, *folders, definition.name))
    return replace(definition, name=name, prompt=prompt)
