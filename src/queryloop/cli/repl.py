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
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .args import CliOptions
from .commands import parse_slash
from .exit_codes import ExitCode
from .host import CommandHost, LineReader
from .interrupts import Interruptible, SigintRouter
from .line_input import plain_read_line, prompt_session
from .loading import Loaded, build_in_background
from .markup import escape_markup, is_animated
from .typeahead import TypeAhead, after_turn, start_typeahead, typeahead_paused

if TYPE_CHECKING:
    from ..agent import Agent
    from ..messages.types import Message
    from ..permissions import PermissionRequest
    from .render import Renderer


NOTIFY_AFTER_S = 6.0
"""A permission question waits this long before Notification hooks run (Claude Code's)."""


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
        self._loading: asyncio.Task[None] | None = None
        """The session's load behind the first prompt (`_load`), from `run` on."""
        self._session: Any = None
        self._work: Interruptible | None = None
        self._aborting = False
        """True when Ctrl-C interrupted the last turn."""
        self._ask_lock = asyncio.Lock()
        self._interrupts = 0
        self.status_line = ""
        self.typeahead: TypeAhead | None = None
        self._next_input = ""
        """Text to pre-fill the next input line with (`prefill`)."""
        self._reading: str | None = None
        """The prompt being read right now, if any."""
        self.notify_after_s = NOTIFY_AFTER_S
        """How long a question waits before Notification hooks run."""

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
        from .preload import startup_notices
        from .render import Renderer

        renderer = Renderer(self.console, cwd=self.options.cwd)
        agent = self._make_agent(self.options, renderer)
        check_settings(agent.options)
        return Loaded(renderer, agent, tuple(startup_notices(self.options.model)))

    async def _load(self) -> None:
        loaded = await build_in_background(self.options.model, self._build)
        self._renderer, self._agent = loaded.renderer, loaded.agent
        for notice in loaded.notices:
            self.notice(notice)
        await loaded.agent.start()
        if self.options.continue_latest or self.options.resume:
            self._above_prompt(lambda: loaded.renderer.show_recent(loaded.agent.messages))

    def _make_agent(self, options: CliOptions, renderer: Renderer) -> Agent:
        from ..loop.summaries import summaries_wanted
        from .agent_factory import make_agent

        return make_agent(
            options,
            can_use_tool=self.can_use_tool,
            on_notice=self.notice,
            on_hook_status=renderer.hook_status,  # a hook's statusMessage as the spinner
            # A person reads along: label each tool run (QUERYLOOP_TOOL_USE_SUMMARIES=0: off).
            tool_use_summaries=summaries_wanted(True),
        )

    def _loaded(self) -> bool:
        return self._loading is not None and self._loading.done()

    async def _ready(self) -> None:
        """Wait for the session's load (its error is raised here)."""
        loading = self._loading
        if loading is None:
            raise RuntimeError("the REPL's session is loaded by run()")
        if not loading.done():
            self.console.print("[dim]starting…[/]", highlight=False)
        await asyncio.shield(loading)

    async def started(self) -> None:
        """Wait, quietly, until the session has loaded (its error is raised here)."""
        if self._loading is not None:
            await asyncio.shield(self._loading)

    async def _settle_load(self) -> None:
        """At the end: let a load still running finish (nothing half-built is left to
        close); its error, if it failed, was reported already or never mattered."""
        if self._loading is not None:
            with contextlib.suppress(Exception):
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
        """Run `show` (it prints); while the session loads and a prompt is drawn, above it."""
        prompt = self._reading
        if prompt is None or self._loaded():
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
        """Ask once whether to trust a folder whose project files could run code. (Without
        such files nothing is imported here: the prompt comes sooner.)"""
        cwd = self.options.cwd
        found = _project_config(cwd)
        if self.options.trust is not None or not found:
            return
        from ..config.trust import is_trusted, trust_folder

        if is_trusted(cwd):
            return
        files = ", ".join(str(p.relative_to(cwd)) for p in found)
        self.console.print(
            f"[yellow]This folder has project settings ({files}) that can run commands "
            "(hooks, MCP servers) and widen what the agent may do.[/]\n"
            "Until you trust it, they are ignored (its deny rules still apply)."
        )
        try:
            answer = (await self.read_line("Trust this folder? [y/N] > ")).strip().lower()
        except (EOFError, KeyboardInterrupt):
            return
        if answer in ("y", "yes"):
            path = trust_folder(cwd)
            self.console.print(f"[dim]trusted {cwd} (recorded in {path})[/]")

    async def replace_agent(self, **changes: Any) -> Agent:
        """Swap the agent (for /model and /resume), closing the old one; the new one,
        started."""
        options = dataclasses.replace(self.options, continue_latest=False, **changes)
        new = self._make_agent(options, self.renderer)
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
        if self._read_line is not None:
            return await self._read_line(prompt)
        if not is_animated(self.console):
            return await plain_read_line(prompt, self.console, self.interrupts)
        if self._session is None:
            self._session = prompt_session(
                self.options.cwd,
                lambda: self.agent.slash_commands,
                ready=self.started,
                toolbar=lambda: self.status_line,
            )
        # The toolbar is redrawn on every key press: compute the status once per prompt.
        self.status_line = self.status()
        default, self._next_input = self._next_input, ""
        try:
            # In raw mode Ctrl-C is a key (bound below); SIGINT stays with our router.
            result: str = await self._session.prompt_async(
                prompt, default=default, handle_sigint=False
            )
        finally:
            self.interrupts.reassert()
        return result

    def status(self) -> str:
        """The bottom status line (empty while the session loads)."""
        if not self._loaded() or self._agent is None:
            return ""
        from .render_text import status_text

        try:
            context = self.agent.context_usage()
        except Exception:  # the status line must never break the prompt
            context = {}
        return status_text(self.agent.model, context, self.agent.usage, self.agent.cost_usd)

    async def can_use_tool(
        self, tool: str, input: Mapping[str, Any], request: PermissionRequest
    ) -> Any:
        """The Agent's permission callback (only for calls the rules leave open): shows the
        call (an edit as a coloured diff), asks y (once) / n (deny) / a (always: adds the
        rule to this session and to the project's local settings, and says so)."""
        # One question at a time: parallel calls and subagents share this prompt.
        async with self._ask_lock:
            return await self._ask(tool, input, request)

    async def _ask(self, tool: str, input: Mapping[str, Any], request: Any) -> Any:
        """Show the question and read the answer. While it waits nothing else is drawn: the
        spinner stops and what arrives meanwhile (the stream, other calls, subagents'
        progress) is drawn after it (`Renderer.hold`)."""
        from ..permissions import PermissionAllow
        from .always import always_offer

        offer = always_offer(request)
        self.renderer.hold()
        try:
            self._show_question(tool, input, request, offer.why_not if offer.rule is None else "")
            waiting = self._notify_later(f"queryloop needs your permission to use {tool}")
            try:
                with typeahead_paused(self.typeahead):
                    answer = await self._permission_answer(always=offer.rule is not None)
            finally:
                waiting.cancel()
            if answer == "always" and offer.rule is not None:
                self._remember(offer.rule)
                return PermissionAllow(remember=True)
            return answer is True
        finally:
            self.renderer.release()

    def _show_question(
        self, tool: str, input: Mapping[str, Any], request: Any, no_always: str
    ) -> None:
        """The call whole, who asks (a subagent), what the analysis found, an edit's diff."""
        from .diffs import proposed_diff
        from .question import question_lines

        agent_id = getattr(request, "agent_id", None)
        asker = self.renderer.subagents.of(str(agent_id)) if agent_id else ""
        reason = str(getattr(request, "reason", "") or "")
        for line in question_lines(tool, input, reason=reason, asker=asker):
            self.console.print(line, highlight=False)
        diff = proposed_diff(tool, input, Path(getattr(request, "cwd", self.options.cwd)))
        if diff:
            self.renderer.show_diff(diff)
        if no_always:
            self.console.print(f"[dim]No \\[a]lways for this call: {escape_markup(no_always)}.[/]")

    def _notify_later(self, message: str, kind: str = "permission_prompt") -> asyncio.Task[None]:
        """Notification hooks once a question has waited `notify_after_s` seconds (Claude
        Code waits about six); cancelled when it is answered first."""

        async def later() -> None:
            await asyncio.sleep(self.notify_after_s)
            try:
                await self.agent.notification(message, kind, title="Permission needed")
            except Exception:  # a notification must never break the question
                pass

        return asyncio.create_task(later(), name="queryloop-notify")

    def _remember(self, rule: str) -> None:
        from ..config.trust import is_trusted
        from .always import save_local_rule

        try:
            path = save_local_rule(self.options.cwd, rule)
        except (OSError, ValueError) as exc:
            self.console.print(
                f"[yellow]Allowed {escape_markup(rule)} for this session; could not save it: "
                f"{escape_markup(str(exc))}[/]"
            )
            return
        later = "" if is_trusted(self.options.cwd) else (
            " · later sessions use it once this folder is trusted (queryloop trust)"
        )  # fmt: skip
        self.console.print(
            f"[green]Added allow rule {escape_markup(rule)}[/] [dim]to this session and to "
            f"{escape_markup(str(path))}{later}[/]"
        )

    async def _permission_answer(self, *, always: bool = True) -> bool | str:
        question = "[y]es / [n]o / [a]lways > " if always else "[y]es / [n]o > "
        while True:
            try:
                answer = (await self.read_line(question)).strip().lower()
            except EOFError:
                return False
            except KeyboardInterrupt:
                # Ctrl-C at the prompt: deny this call and stop the turn.
                self.interrupt_work()
                return False
            if answer in ("y", "yes"):
                return True
            if always and answer in ("a", "always"):
                return "always"
            if answer in ("n", "no", ""):
                return False

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
        await self.run_turn(text)
        typeahead, self.typeahead = self.typeahead, None
        return await after_turn(
            self._host(), typeahead, interrupted=self._aborting, run_line=self.handle_line
        )

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


def _project_config(cwd: Path) -> list[Path]:
    """The project files that need trust before they take effect."""
    names = (".queryloop/settings.json", ".queryloop/settings.local.json", ".mcp.json")
    return [cwd / name for name in names if (cwd / name).is_file()]


def run_repl(options: CliOptions) -> int:
    """Run the REPL to its end (the `queryloop` command without -p)."""
    repl = Repl(options)

    async def _main() -> int:
        return await repl.run()

    return asyncio.run(_main())
