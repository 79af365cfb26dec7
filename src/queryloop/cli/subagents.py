"""How the REPL names subagents: by type and description, numbered when a name repeats."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class SubagentLabels:
    """Names the session's subagents for people: `helper (count the files)`, the type alone
    without a description, and `#2`, `#3` after a name an earlier subagent has, so two of
    one type working at once are told apart in progress lines and questions."""

    def __init__(self) -> None:
        self._labels: dict[str, str] = {}

    def learn(self, data: Mapping[str, Any]) -> str:
        """The label of the subagent a progress record is from (named at its first)."""
        agent_id = str(data.get("agent_id") or "")
        known = self._labels.get(agent_id)
        if known is not None:
            return known
        kind = str(data.get("agent_type") or "agent")
        description = " ".join(str(data.get("description") or "").split())[:60]
        name = f"{kind} ({description})" if description else kind
        earlier = sum(1 for label in self._labels.values() if label.split(" #")[0] == name)
        label = f"{name} #{earlier + 1}" if earlier else name
        self._labels[agent_id] = label
        return label

    def of(self, agent_id: str) -> str:
        """The label of `agent_id` (`subagent <id>` for one never reported)."""
        return self._labels.get(agent_id) or f"subagent {agent_id}"
