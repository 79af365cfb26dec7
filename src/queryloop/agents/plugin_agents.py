"""The subagent types plugins bring: `agents/*.md` (or the manifest's `agents` paths) of each
loaded plugin, named `<plugin>:<name>` (Claude Code: "the agent `agent-creator` for the
plugin with name `plugin-dev` will appear as `plugin-dev:agent-creator`"), with
`${CLAUDE_PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_DATA}` substituted in their prompts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..config.discovery import FileScope, FoundFile
from ..config.plugins import Plugin
from .definitions import AgentDefinition, read_agent_file


def plugin_agents(plugins: Sequence[Plugin]) -> tuple[list[AgentDefinition], list[str]]:
    """The plugins' agent definitions, and notices for files that could not be used."""
    found: list[AgentDefinition] = []
    notices: list[str] = []
    for plugin in plugins:
        for file in _agent_files(plugin.agents):
            definition, problems = read_agent_file(FoundFile(file, FileScope.PLUGIN))
            notices.extend(problems)
            if definition is not None:
                found.append(_namespaced(definition, plugin))
    return found, notices


def _agent_files(paths: Sequence[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        files += [path] if path.is_file() else sorted(path.glob("*.md"))
    return files


def _namespaced(definition: AgentDefinition, plugin: Plugin) -> AgentDefinition:
    prompt = definition.prompt
    for name, value in plugin.variables.items():
        prompt = prompt.replace("${" + name + "}", value)
    return replace(definition, name=f"{plugin.name}:{definition.name}", prompt=prompt)
