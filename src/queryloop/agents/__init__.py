"""queryloop.agents: subagents — agent definitions, the subagent runner, sidechain transcripts.

    from queryloop import Agent
    from queryloop.agents import AgentDefinition

    reviewer = AgentDefinition(
        name="reviewer",
        description="Reviews a change for bugs; use after editing code.",
        prompt="You are a careful code reviewer...",
        tools=("Read", "Grep", "Glob"),
        max_turns=8,
    )
    agent = Agent("claude-sonnet-5-5", agents=[reviewer])

See docs/agents.md.
"""

from .definitions import (
    GENERAL_PURPOSE,
    GENERAL_PURPOSE_AGENT,
    AgentCatalog,
    AgentDefinition,
    AgentSource,
    LoadedAgents,
    load_agents,
    parse_agent_text,
)
from .host import AGENT_TOOL_NAME, DEFAULT_MAX_DEPTH, SubagentHost
from .runner import SubagentOutcome, SubagentRun

__all__ = [
    "AGENT_TOOL_NAME",
    "DEFAULT_MAX_DEPTH",
    "GENERAL_PURPOSE",
    "GENERAL_PURPOSE_AGENT",
    "AgentCatalog",
    "AgentDefinition",
    "AgentSource",
    "LoadedAgents",
    "SubagentHost",
    "SubagentOutcome",
    "SubagentRun",
    "load_agents",
    "parse_agent_text",
]
