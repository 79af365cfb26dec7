"""The REPL's session, loaded behind its first prompt.

The prompt is drawn with little more than prompt_toolkit and rich imported; what the session
needs loads after it, while the user types:

1. on a thread: the model SDK starts importing (`preload`, a thread of its own), then the
   renderer and the Agent are built (importing the loop, the tools and the configuration);
2. on the event loop, once the SDK is in: `Agent.start()` — settings, the session file, MCP
   servers, memory, the system prompt (the REPL's `_load`).

Nothing of it runs before the prompt is on the screen: the threads share one GIL with the
prompt's own imports, so starting them earlier would only delay it. The first line sent waits
for the load (`Repl.handle_line`); a load that fails (a settings file that cannot be parsed, no
API key, an unknown `--resume` id) stops the REPL at once, before any prompt reaches the model.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..agent import Agent, AgentOptions
    from .permission_prompt import PermissionQuestion
    from .render import Renderer


@dataclass(frozen=True)
class Loaded:
    """What the REPL builds behind its prompt: the renderer, the permission question, the
    agent (not started yet) and the notices to show before the first request."""

    renderer: Renderer
    question: PermissionQuestion
    agent: Agent
    notices: tuple[str, ...]


async def build_in_background(model: str | None, build: Callable[[], Loaded]) -> Loaded:
    """Start the SDK import for `model`, run `build` on a thread, and return once both are
    done, so what follows on the event loop (`Agent.start`) never blocks it on an import."""
    from . import preload

    def prepare() -> tuple[Loaded, threading.Thread | None]:
        importing = preload.start_preload(model)
        return build(), importing

    loaded, importing = await asyncio.to_thread(prepare)
    if importing is not None:
        await preload.finished(importing)
    return loaded


def check_settings(options: AgentOptions) -> None:
    """Read now, on the loading thread, what the session reads before it needs the SDK: the
    settings files (an invalid one raises `SettingsError`, as `Agent.start` would) and the
    provider choice (a missing key raises `ConfigError`). So such an error stops the REPL
    within moments of its start, not only once the SDK import is done."""
    from ..agent.assembly import build_workspace
    from ..agent.assembly_model import model_name
    from ..providers.factory import choose_provider
    from ..session import queryloop_home

    name = model_name(options, build_workspace(options, queryloop_home(options.session.home)))
    if options.model.provider is None:
        choose_provider(name, base_url=options.model.base_url)
