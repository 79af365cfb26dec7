"""The interactive REPL: prompt_toolkit input, rich output, Ctrl-C semantics, slash commands.

Ctrl-C while the agent works — waiting for the model, streaming, at a permission prompt (which
it denies), running tools, compacting — stops the turn: `agent.abort()` first, and a cancel if
the turn has not ended half a second later (see `interrupts`), so the prompt is back within a
second. Ctrl-C at the prompt clears the line; on an empty line it warns, and a second one exits.
The console and the line reader are injectable so tests can drive the REPL without a terminal.

Start-up draws the banner and the prompt first and loads the session behind them (`loading`):
the model SDK, settings, MCP servers and memory load while the user types, and the first line
sent waits for them. A load that fails stops the REPL before anything reaches the model.
Slash commands and the other helpers get a `CommandHost`, never the REPL itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .args import CliOptions
from .commands import parse_slash
from .exit_codes import ExitCode
from .heap import settle
from .host import CommandHost, LineReader
from .interrupts import Interruptible, SigintRouter
from .line_input import plain_read_line, prompt_session
from .loading import Loaded, build_in_background
from .markup import escape_markup, is_animated
from .permission_prompt import NOTIFY_AFTER_S
from .typeahead import TypeAhead, after_turn, start_typeahead, typeahead_paused

if TYPE_CHECKING:
    from ..agent import Agent
    from ..messages.types import Message
    from .permission_prompt import PermissionQuestion
    from .render import Renderer
    from .status_line import StatusLineCommand


class Repl:
    """One interactive session. `await Repl(options).run()` returns the exit status."""

    def __init__(
        self,
        options: CliOptions,
        *,
        console: Any = None,
        read_line: LineReader | None = None,
    ) -> None:
        from rich.console import Console

        self.options = options
        self.console = console or Console(highlight=False)
        self._read_line = read_line
        self.interrupts = SigintRouter()
        self._agent: Agent | None = None
        """The session's agent, once loaded (`agent`); /model and /resume replace it."""
        self._renderer: Renderer | None = None
        """Draws loop events, once loaded (`renderer`)."""
        self._question: PermissionQuestion | None = None
        """The permission question (the agents' `can_use_tool`), once loaded."""
        self._loading: asyncio.Task[None] | None = None
        """The session's load behind the first prompt (`_load`), from `run` on."""
        self._drawn = asyncio.Event()
        """Set once a prompt is on the screen, or a line needs the session: the load waits
        for it (its threads would only slow the prompt's own imports and drawing)."""
        self._session: Any = None
        self._work: Interruptible | None = None
        self._aborting = False
        """True when Ctrl-C interrupted the last turn."""
        self._interrupts = 0
        self.status_line = ""
        self.typeahead: TypeAhead | None = None
        self._next_input = ""
        """Text to pre-fill the next input line with (`prefill`)."""
        self._reading: str | None = None
        """The prompt being read right now, if any."""
        self.notify_after_s = NOTIFY_AFTER_S
        """How long a question waits before Notification hooks run."""
        self._bash_context: list[str] = []
        """`!command` records not sent yet: the next prompt carries them (`bash_mode`)."""
        self._status_command: StatusLineCommand | None = None
        """The settings' `statusLine` command, once the session has one (`status_line`)."""
        self._started_at = time.monotonic()

    @property
    def agent(self) -> Agent:
        """The session's agent (the first line sent waits until it is loaded)."""
        if self._agent is None:
            raise RuntimeError("the REPL's session has not loaded yet")
        return self._agent

    @property
    def renderer(self) -> Renderer:
        """What draws the session's events (loaded with the agent)."""
        if self._renderer is None:
            raise RuntimeError("the REPL's session has not loaded yet")
        return self._renderer

    # ---- the session, loaded behind the prompt -----------------------------------------

    def _build(self) -> Loaded:
        """The renderer and the agent (on the loading thread: the heavy imports happen here)."""
        from .loading import check_settings
        from .permission_prompt import PermissionQuestion, QuestionHost
        from .preload import startup_notices
        from .render import Renderer

        renderer = Renderer(self.console, cwd=self.options.cwd)
        question = PermissionQuestion(
            QuestionHost(
                console=self.console,
                renderer=renderer,
                cwd=self.options.cwd,
                read_line=self.read_line,
                paused=lambda: typeahead_paused(self.typeahead),
                interrupt_work=self.interrupt_work,
                notify=self._notify,
                notify_after_s=self.notify_after_s,
            )
        )
        agent = self._make_agent(self.options, renderer, question)
        check_settings(agent.options)
        notices = tuple(startup_notices(self.options.model))
        return Loaded(renderer, question, agent, notices)

    async def _load(self) -> None:
        await self._drawn.wait()
        loaded = await build_in_background(self.options.model, self._build)
        self._renderer, self._question, self._agent = loaded.renderer, loaded.question, loaded.agent
        for notice in loaded.notices:
            self.notice(notice)
        await loaded.agent.start()
        settle()  # what start-up built stays: the collector skips it from now on (`heap`)
        if self.options.continue_latest or self.options.resume:
            self._above_prompt(lambda: loaded.renderer.show_recent(loaded.agent.messages))

    async def _notify(self, message: str) -> None:
        """Notification hooks for a permission question waiting (the agent of the moment)."""
        await self.agent.notification(message, "permission_prompt", title="Permission needed")

    def _make_agent(
        self, options: CliOptions, renderer: Renderer, question: PermissionQuestion
    ) -> Agent:
        from ..loop.summaries import summaries_wanted
        from .agent_factory import make_agent

        return make_agent(
            options,
            can_use_tool=question.ask,
            on_notice=self.notice,
            mcp_wait=False,  # the prompt never waits for MCP servers: they join when ready
            on_hook_status=renderer.hook_status,  # a hook's statusMessage as the spinner
            # A person reads along: label each tool run (QUERYLOOP_TOOL_USE_SUMMARIES=0: off).
            tool_use_summaries=summaries_wanted(True),
        )

    def _slash_commands(self) -> Mapping[str, Any]:
        """The session's skills and commands (none known while it loads)."""
        return self._agent.slash_commands if self._loaded() and self._agent else {}

    def _loaded(self) -> bool:
        return self._loading is not None and self._loading.done()

    async def _ready(self) -> None:
        """Wait for the session's load (its error is raised here)."""
        loading = self._loading
        if loading is None:
            raise RuntimeError("the REPL's session is loaded by run()")
        self._drawn.set()  # a line to run needs the session now
        if not loading.done():
            self.console.print("[dim]starting…[/]", highlight=False)
        await asyncio.shield(loading)

    async def started(self) -> None:
        """Wait, quietly, until the session has loaded (its error is raised here)."""
        if self._loading is not None:
            await asyncio.shield(self._loading)

    async def _settle_load(self) -> None:
        """At the end: let a load still running finish (nothing half-built is left to
        close); its error, if it failed, was reported already or never mattered. A load
        that never began (no prompt was drawn) is cancelled."""
        if self._loading is None:
            return
        if not self._drawn.is_set():
            self._loading.cancel()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await self._loading

    def _host(self) -> CommandHost:
        """What a slash command, a memory line or the type-ahead may use (`host`)."""
        return CommandHost(
            agent=self.agent,
            console=self.console,
            cwd=self.options.cwd,
            read_line=self.read_line,
            prefill=self.prefill,
            replace_agent=self.replace_agent,
            interruptible=self.interruptible,
            show_recent=self._show_recent,
        )

    def _show_recent(self, messages: Sequence[Message]) -> None:
        self.renderer.show_recent(list(messages))

    def prefill(self, text: str) -> None:
        """Put `text` in the next input line, to edit or send (a prompt given back)."""
        self._next_input = text

    def notice(self, text: str) -> None:
        """Show a notice from the agent (ignored untrusted settings, failed MCP servers...);
        one from the load behind the prompt arrives while a prompt is drawn: it goes above
        it."""

        self._above_prompt(
            lambda: self.console.print(f"[yellow]notice:[/] {text}", markup=True, highlight=False)
        )

    def _above_prompt(self, show: Callable[[], None]) -> None:
        """Run `show` (it prints); while a prompt is drawn, above it (a notice arrives at any
        time: the load behind the first prompt, an MCP server that connects later)."""
        prompt = self._reading
        if prompt is None:
            show()
        elif self._session is not None:
            from prompt_toolkit.application import run_in_terminal

            run_in_terminal(show)
        else:  # the plain reader: the notice on a line of its own, then the prompt again
            self.console.print()
            show()
            self.console.print(prompt, end="", markup=False, highlight=False)
            self.console.file.flush()

    async def ask_trust(self) -> None:
        """Ask once whether to trust a folder whose project files could run code or widen
        what the agent may do, naming what they hold (Claude Code asks "Do you trust the
        files in this folder?" and names the files: docs/settings.md, "Workspace trust")."""
        cwd = self.options.cwd
        if self.options.trust is not None or not _may_hold_config(cwd):
            return  # nothing imported: the prompt comes sooner
        from ..config.project_config import project_config
        from ..config.settings import queryloop_home
        from ..config.trust import SHOW_COMMAND, is_trusted, trust_folder

        home = queryloop_home()
        holds = project_config(cwd, home)
        if not holds or is_trusted(cwd, home):
            return
        listed = "".join(f"\n  {escape_markup(part)}" for part in holds.parts())
        self.console.print(
            f"[yellow]Do you trust the files in this folder?[/] {escape_markup(str(cwd))}\n"
            f"Once trusted, its project files run commands (hooks, MCP servers) and may "
            f"widen what the agent may do:{listed}\n"
            f"Until you trust it, they are ignored (its deny rules still apply). "
            f"`{SHOW_COMMAND}` lists them in full."
        )
        try:
            answer = (await self.read_line("Trust this folder? [y/N] > ")).strip().lower()
        except (EOFError, KeyboardInterrupt):
            return
        if answer in ("y", "yes"):
            path = trust_folder(cwd, home)
            self.console.print(f"[dim]trusted {cwd} (recorded in {path})[/]")

    async def replace_agent(self, **changes: Any) -> Agent:
        """Swap the agent (for /model and /resume), closing the old one; the new one,
        started."""
        from .loading import check_settings

        options = dataclasses.replace(self.options, continue_latest=False, **changes)
        assert self._question is not None  # loaded with the renderer
        new = self._make_agent(options, self.renderer, self._question)
        # A model that cannot work (`/model gpt5` with no server for it) fails here, before
        # the session is touched: the old agent, its model and the status line stay.
        check_settings(new.options)
        await self.agent.aclose()
        self._agent = new
        self.options = dataclasses.replace(options, resume=None)
        return await new.start()

    # ---- input -------------------------------------------------------------------------

    async def read_line(self, prompt: str = "> ") -> str:
        """One line (or several, with Esc+Enter / trailing backslash) from the user."""
        self._reading = prompt
        try:
            return await self._read(prompt)
        finally:
            self._reading = None

    async def _read(self, prompt: str) -> str:
        # The line readers draw the prompt before they first wait: the load begins after it.
        if self._read_line is not None:
            self._drawn.set()
            return await self._read_line(prompt)
        if not is_animated(self.console):
            self._drawn.set()
            return await plain_read_line(prompt, self.console, self.interrupts)
        if self._session is None:
            self._session = prompt_session(
                self.options.cwd,
                self._slash_commands,
                ready=self.started,
                toolbar=lambda: self.status_line,
            )
        # The toolbar is redrawn on every key press: compute the status once per prompt.
        self.status_line = self.status()
        self._run_status_command()
        default, self._next_input = self._next_input, ""
        try:
            # In raw mode Ctrl-C is a key (bound below); SIGINT stays with our router.
            # `pre_run` runs right before the first drawing, in the same step of the loop.
            result: str = await self._session.prompt_async(
                prompt, default=default, handle_sigint=False, pre_run=self._drawn.set
            )
        finally:
            self.interrupts.reassert()
        return result

    def status(self) -> str:
        """The bottom status line (empty while the session loads): the `statusLine`
        command's line when the settings have one and it has printed, else our own."""
        if not self._loaded() or self._agent is None:
            return ""
        if self._status_command is not None and self._status_command.text:
            return self._status_command.text
        from .render_text import status_text

        try:
            context = self.agent.context_usage()
        except Exception:  # the status line must never break the prompt
            context = {}
        return status_text(self.agent.model, context, self.agent.usage, self.agent.cost_usd)

    def _run_status_command(self) -> None:
        """Give the `statusLine` command the session as it is now (it runs debounced, and
        only when something changed; its line replaces ours once printed)."""
        if not self._loaded() or self._agent is None or self._agent.status_line is None:
            return
        from .. import __version__
        from .status_line import StatusLineCommand, status_payload

        agent, command = self._agent, self._agent.status_line.command
        if self._status_command is None or self._status_command.command != command:
            self._status_command = StatusLineCommand(
                command, self.options.cwd, self._status_changed
            )
        try:
            context = agent.context_usage()
        except Exception:  # the status line must never break the prompt
            context = {}
        self._status_command.update(
            status_payload(
                session_id=agent.session_id,
                transcript_path=agent.hook_transcript_path,
                cwd=self.options.cwd,
                model=agent.model,
                version=__version__,
                cost_usd=agent.cost_usd,
                duration_ms=int((time.monotonic() - self._started_at) * 1000),
                context=context,
            )
        )

    def _status_changed(self) -> None:
        self.status_line = self.status()
        if self._session is not None:
            self._session.app.invalidate()

    # ---- the loop ----------------------------------------------------------------------

    async def run(self) -> int:
        """Read, run, repeat until /exit, Ctrl-D or two Ctrl-Cs."""
        self.interrupts.install()
        try:
            await self.ask_trust()
            self._banner()
            # Created now, it first runs once the prompt below is on the screen (`loading`).
            self._loading = asyncio.create_task(self._load(), name="queryloop-load")
            # The first prompt goes the way of a typed line (type-ahead, /skills, # memory).
            if self.options.prompt and not await self.handle_line(self.options.prompt):
                return ExitCode.OK
            while True:
                try:
                    line = await self._next_line()
                except EOFError:
                    return ExitCode.OK
                except KeyboardInterrupt:
                    self._interrupts += 1
                    if self._interrupts >= 2:
                        return ExitCode.OK
                    self.console.print("[dim](press Ctrl-C again to exit)[/]")
                    continue
                self._interrupts = 0
                if not await self.handle_line(line):
                    return ExitCode.OK
        finally:
            if self._status_command is not None:
                await self._status_command.aclose()
            await self._settle_load()
            if self._agent is not None:
                await self._agent.aclose("prompt_input_exit")
            self.interrupts.uninstall()

    async def _next_line(self) -> str:
        """The next line at the main prompt. While the session loads, a load that fails ends
        the reading: its error is raised here, whatever was being typed is dropped."""
        loading = self._loading
        if loading is None or loading.done():
            if loading is not None:
                loading.result()  # a load that failed before this prompt: its error
            return await self.read_line("> ")
        reading = asyncio.create_task(_caught(self.read_line("> ")), name="queryloop-read")
        await asyncio.wait({reading, loading}, return_when=asyncio.FIRST_COMPLETED)
        if not reading.done() and loading.exception() is not None:
            reading.cancel()
            await asyncio.wait({reading})
            if not is_animated(self.console):
                self.console.print()  # the error goes on a line of its own, not after "> "
            loading.result()  # raises the load's error
        outcome = await reading
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    async def handle_line(self, line: str) -> bool:
        """Run a prompt or a slash command; False means exit."""
        text = line.strip()
        if not text:
            return True
        if text.startswith("!"):  # bash mode: needs no session, so no wait for its load
            await self._bash(text[1:].strip())
            return True
        await self._ready()
        if text.startswith("#"):
            from .memory_cmd import memory_shortcut

            return await memory_shortcut(self._host(), text.lstrip("#").strip())
        if text.startswith("/"):
            command, name, arg = parse_slash(text)
            if command is None and name in self.agent.slash_commands:
                await self.run_turn(text)  # /<name> [args]: the skill's or command's text
                return True
            if command is None:
                self.console.print(f"[red]Unknown command /{name}[/] [dim](try /help)[/]")
                return True
            try:
                return await command.handler(self._host(), arg)
            except Exception as exc:  # a failed command must not end the session
                self.console.print(f"[red]/{command.name} failed: {exc}[/]")
                return True
        context, self._bash_context = self._bash_context, []
        await self.run_turn("\n\n".join([*context, text]))
        typeahead, self.typeahead = self.typeahead, None
        return await after_turn(
            self._host(), typeahead, interrupted=self._aborting, run_line=self.handle_line
        )

    async def _bash(self, command: str) -> None:
        """`!command`: run it now, as the user, show its output, and keep it for the next
        prompt (`bash_mode`; Claude Code's bash mode asks no permission rule either)."""
        if not command:
            self.console.print("[dim]! runs a shell command: !ls[/]")
            return
        from .bash_mode import run_bash

        runner = Interruptible(self.interrupts)
        done = await runner.run(run_bash(command, self.options.cwd))
        if done is None:
            self.console.print("[yellow]Interrupted.[/]")
            return
        for text, style in ((done.stdout, ""), (done.stderr, "red")):
            if text:
                self.console.print(text.rstrip("\n"), style=style, markup=False, highlight=False)
        if done.status:
            self.console.print(f"[dim](exit status {done.status})[/]")
        self._bash_context.append(done.context())

    async def run_turn(self, prompt: str) -> None:
        """Stream one prompt's events to the renderer; Ctrl-C stops it."""
        self.renderer.start_turn()
        self._aborting = False
        # Not with an injected line reader: stdin is not where the lines come from.
        self.typeahead = (
            start_typeahead(self.agent, self.console) if self._read_line is None else None
        )
        try:
            await self.interruptible(self._consume(prompt))
        except Exception as exc:
            self.renderer.notice(f"Error: {exc}", style="red")
        finally:
            if self.typeahead is not None:
                self.typeahead.stop()
            self.renderer.pause()

    async def interruptible(
        self, work: Coroutine[Any, Any, Any], *, notice: str | None = None
    ) -> bool:
        """Run `work` so that Ctrl-C stops it (the agent aborts, then the task is cancelled).
        False when it was interrupted before it finished. One line says so: `notice` when
        given (a command's own words), else "Interrupted." when the work had to be
        cancelled (a turn that stops by itself says so in its Terminal)."""
        runner = self._work = Interruptible(self.interrupts, soft_stop=self.agent.abort)
        try:
            await runner.run(work)
        except Exception:
            if not runner.interrupted:
                raise
            # Stopped by the abort (a summary request raises "aborted"): an interrupt.
            runner.cancelled = True
        finally:
            self._work = None
            self._aborting = runner.interrupted
        if runner.interrupted and notice is not None:
            self.renderer.notice(notice, style="yellow")
        elif runner.cancelled:
            self.renderer.notice("Interrupted.", style="yellow")
        return not runner.interrupted

    def interrupt_work(self) -> None:
        """What Ctrl-C does while work runs (also called by the permission prompt)."""
        if self._work is not None:
            self._work.interrupt()

    async def _consume(self, prompt: str) -> None:
        async for event in self.agent.stream(prompt):
            self.renderer.handle(event)

    def _banner(self) -> None:
        # The model settings may choose is known once the session loads (the status line).
        model = f" · {self.options.model}" if self.options.model else ""
        self.console.print(
            f"[bold]queryloop[/]{model} · {self.options.cwd}\n"
            "[dim]/help for commands · Ctrl-C interrupts · Ctrl-D exits[/]"
        )


async def _caught(reading: Awaitable[str]) -> str | BaseException:
    """`reading`'s line, or the EOFError or KeyboardInterrupt it raised, as a value: a task
    must not raise KeyboardInterrupt (asyncio would stop the event loop with it)."""
    try:
        return await reading
    except (EOFError, KeyboardInterrupt) as exc:
        return exc


def _may_hold_config(cwd: Path) -> bool:
    """Whether `cwd` or a folder above it up to the repository root has a project folder
    (`.claude/`, `.queryloop/`) or `.mcp.json`: only then is the configuration counted."""
    for folder in (cwd, *cwd.parents):
        if any((folder / name).exists() for name in (".claude", ".queryloop", ".mcp.json")):
            return True
        if (folder / ".git").exists() or folder == Path.home():
            return False
    return False


def run_repl(options: CliOptions) -> int:
    """Run the REPL to its end (the `queryloop` command without -p)."""
    repl = Repl(options)

    async def _main() -> int:
        return await repl.run()

    return asyncio.run(_main())
