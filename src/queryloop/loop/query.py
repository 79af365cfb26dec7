"""The query loop: an explicit state machine over the message array.

Each iteration runs the phases of DESIGN.md in order:

    preprocess (budget → snip → microcompact → collapse → autocompact)
    → blocking-limit check → model call with fallback → abort check
    → no tool use: recovery, stop hooks, token budget, or completed
    → tool execution → attachments → max-turns check → next turn

An iteration ends either with a whole new `State` and a `Continue` reason, or with a
`TerminalEvent`, which is always the last event `query_loop()` yields.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from ..hooks.types import StopHookInput, StopHookResult, ToolCallRecord
from ..messages.constructors import (
    answer_unanswered,
    meta_user_message,
    result_ids,
    system_message,
    text_of,
    tombstone,
    user_message,
)
from ..messages.interruption import INTERRUPTED_BY_USER, INTERRUPTED_FOR_TOOL_USE, Interruption
from ..messages.types import Message, SystemSubtype, TombstoneReason
from ..providers.errors import MediaError, PromptTooLongError
from ..tools.executor import run_tools
from . import prompts
from .deps import QueryParams
from .events import (
    CompactionEvent,
    CompactTrigger,
    LoopEvent,
    MessageEvent,
    TerminalEvent,
    TransitionEvent,
)
from .model_call import ModelCall, ModelOutcome
from .reasons import Continue, Terminal
from .state import State
from .summaries import outcome_events, settle_terminal

log = logging.getLogger(__name__)

MAX_OUTPUT_RECOVERIES = 3
BUDGET_COMPLETION_SHARE = 0.9
DIMINISHING_RETURNS_TOKENS = 500
MAX_BUDGET_CONTINUATIONS = 20


async def query(
    params: QueryParams, messages: Sequence[Message], *, model: str | None = None
) -> AsyncIterator[LoopEvent]:
    """Run one query to its end. A thin wrapper over `query_loop` (the place for lifecycle
    work around the loop); the last event is a `TerminalEvent`."""
    async for event in query_loop(params, messages, model=model):
        yield event


async def query_loop(
    params: QueryParams, messages: Sequence[Message], *, model: str | None = None
) -> AsyncIterator[LoopEvent]:
    """The state machine. Yields stream deltas, every message as it is created, one
    `TransitionEvent` per continue, and finally the `TerminalEvent`. `model`: the model of
    this query (a command's `model`), default the request builder's."""
    state = State(messages=tuple(messages), model=model or params.request_builder.model)
    while True:
        iteration = _Iteration(params, state)
        async for event in iteration.run():
            for task_event in params.task_events() if params.task_events else ():
                yield task_event  # background tasks, between the loop's own events
            if isinstance(event, TerminalEvent) and iteration.pending:
                aborted = params.tool_context.abort.aborted
                grace = params.summary_grace_s
                async for last in settle_terminal(iteration.pending, event, aborted=aborted,
                                                  grace=grace):  # fmt: skip
                    yield last
                return
            yield event
        if iteration.next_state is None:
            return
        state = iteration.next_state
        assert state.transition is not None
        yield TransitionEvent(reason=state.transition, turn=state.turn_count)


class _Iteration:
    """One pass through the phases. Sets `next_state`, or yields the terminal event."""

    def __init__(self, params: QueryParams, state: State) -> None:
        self.params = params
        self.state = state
        self.next_state: State | None = None
        self.messages: list[Message] = list(state.messages)
        self.tracking: Any = state.autocompact_tracking
        self._context_management: Any = None
        self._stopped = False
        self.pending = state.pending_tool_use_summary
        self._summaries: list[Message] = []

    # ---- transitions -------------------------------------------------------------------

    def _continue(self, reason: Continue, messages: Sequence[Message], **changes: Any) -> None:
        """Every continue site goes through here: a whole new State, the reason recorded."""
        base = {
            "messages": tuple(messages),
            "model": self.state.model,
            "autocompact_tracking": self.tracking,
            "max_output_tokens_recovery_count": self.state.max_output_tokens_recovery_count,
            "has_attempted_reactive_compact": self.state.has_attempted_reactive_compact,
            "max_output_tokens_override": None,
            "pending_tool_use_summary": self.pending,
            "stop_hook_active": False,
            "turn_count": self.state.turn_count,
            "budget_continuations": self.state.budget_continuations,
            "output_tokens": self.state.output_tokens,
        }
        base.update(changes)
        self.next_state = State(transition=reason, **base)

    def _terminal(
        self,
        reason: Terminal,
        messages: Sequence[Message],
        detail: str = "",
        error: BaseException | None = None,
    ) -> TerminalEvent:
        return TerminalEvent(
            reason=reason,
            turn=self.state.turn_count,
            detail=detail,
            error=error,
            messages=tuple(messages),
        )

    def _with_reply(self, outcome: ModelOutcome) -> list[Message]:
        """The array after the model call: its reply, then summaries that finished meanwhile."""
        return [*self.messages, *outcome.assistant_messages, *self._summaries]

    # ---- the phases --------------------------------------------------------------------

    async def run(self) -> AsyncIterator[LoopEvent]:
        context_management = None
        async for event in self._preprocess():
            yield event
        if self.params.compactor is not None:
            context_management = self._context_management
            if self.params.compactor.is_at_blocking_limit(self.messages):
                yield self._terminal(
                    Terminal.BLOCKING_LIMIT,
                    self.messages,
                    "The conversation is too long for the model's context window even after "
                    "compaction. Start a new session or run /compact with instructions.",
                )
                return
        call = ModelCall(
            self.params,
            self.messages,
            model=self.state.model,
            max_tokens=self.state.max_output_tokens_override or self.params.max_output_tokens,
            context_management=context_management,
            turn=self.state.turn_count,
        )
        async for event in call.run():
            yield event
        outcome = call.outcome
        self.state = dataclasses.replace(self.state, model=outcome.model)
        ready, self.pending = self.pending.take_ready()
        self._summaries = [r.message for r in ready]
        for event in outcome_events(ready):
            yield event
        if self.params.tool_context.abort.aborted:
            async for event in self._aborted_streaming(outcome):
                yield event
            return
        if outcome.error is not None and not outcome.tool_uses:
            async for event in self._on_error(outcome):
                yield event
            return
        if not outcome.needs_follow_up and outcome.error is None:
            async for event in self._on_stop(outcome):
                yield event
            return
        async for event in self._tools_and_next_turn(outcome):
            yield event

    async def _preprocess(self) -> AsyncIterator[LoopEvent]:
        compactor = self.params.compactor
        if compactor is None:
            return
        result = await compactor.preprocess(self.messages, self.tracking)
        if result.compacted and result.new_messages:
            yield compaction_event(
                result.new_messages, CompactTrigger.AUTO, getattr(result, "compaction", None)
            )
        self.messages = list(result.messages_for_query)
        self.tracking = result.tracking
        self._context_management = result.context_management

    async def _aborted_streaming(self, outcome: ModelOutcome) -> AsyncIterator[LoopEvent]:
        messages = self._with_reply(outcome)
        async for message in self._finish_tools_after_abort(outcome):
            messages.append(message)
            yield MessageEvent(message)
        notice = user_message(INTERRUPTED_BY_USER)
        messages.append(notice)
        yield MessageEvent(notice)
        yield self._terminal(Terminal.ABORTED_STREAMING, messages, "Interrupted by the user.")

    async def _finish_tools_after_abort(self, outcome: ModelOutcome) -> AsyncIterator[Message]:
        """Every tool_use of the response gets a result, so the array stays valid."""
        pending = list(outcome.early_results)
        if outcome.executor is not None:
            async for message in outcome.executor.get_remaining_results():
                pending.append(message)
        for message in pending:
            yield message
        answered = result_ids(pending)
        for message in answer_unanswered(outcome.tool_uses, answered, Interruption.ABORTED):
            yield message

    async def _on_error(self, outcome: ModelOutcome) -> AsyncIterator[LoopEvent]:
        error = outcome.error
        assert error is not None
        messages = self._with_reply(outcome)
        if isinstance(error, PromptTooLongError):
            async for event in self._recover_prompt_too_long(error):
                yield event
            return
        notice = system_message(SystemSubtype.API_ERROR, str(error), level="error")
        yield MessageEvent(notice)
        await self._stop_failure(error)
        reason = Terminal.IMAGE_ERROR if isinstance(error, MediaError) else Terminal.MODEL_ERROR
        yield self._terminal(reason, [*messages, notice], str(error), error)

    async def _recover_prompt_too_long(self, error: PromptTooLongError) -> AsyncIterator[LoopEvent]:
        """Cheapest first: drain staged collapses, then compact once, else give up."""
        compactor = self.params.compactor
        if compactor is not None:
            if self.state.transition != Continue.COLLAPSE_DRAIN_RETRY:
                if await compactor.drain_collapses():
                    self._continue(
                        Continue.COLLAPSE_DRAIN_RETRY, [*self.messages, *self._summaries]
                    )
                    return
            if not self.state.has_attempted_reactive_compact:
                result = await compactor.reactive(self.messages, error)
                if result is not None:
                    compacted = list(result.messages)
                    yield compaction_event(compacted, CompactTrigger.REACTIVE, result)
                    self._continue(
                        Continue.REACTIVE_COMPACT_RETRY,
                        compacted,
                        has_attempted_reactive_compact=True,
                    )
                    return
        notice = system_message(SystemSubtype.API_ERROR, str(error), level="error")
        yield MessageEvent(notice)
        await self._stop_failure(error)
        yield self._terminal(
            Terminal.PROMPT_TOO_LONG,
            [*self.messages, notice],
            f"The prompt is too long for the model and compaction could not shrink it: {error}",
            error,
        )

    async def _on_stop(self, outcome: ModelOutcome) -> AsyncIterator[LoopEvent]:
        """The model stopped without tools: recover a cut-off, consult stop hooks and the
        token budget, or complete."""
        state = self.state
        messages = self._with_reply(outcome)
        output_tokens = state.output_tokens + outcome.usage.output_tokens
        if outcome.stop_reason == "max_tokens":
            async for event in self._recover_max_output(outcome, messages):
                yield event
            return
        async for event in self._run_stop_hooks(outcome, messages):
            yield event
        if self.next_state is not None or self._stopped:
            return
        budget = self.params.token_budget
        if budget and self._budget_allows_more(output_tokens, outcome.usage.output_tokens):
            nudge = meta_user_message(prompts.token_budget_nudge(output_tokens, budget))
            yield MessageEvent(nudge)
            self._continue(
                Continue.TOKEN_BUDGET_CONTINUATION,
                [*messages, nudge],
                budget_continuations=state.budget_continuations + 1,
                output_tokens=output_tokens,
            )
            return
        yield self._terminal(Terminal.COMPLETED, messages)

    def _budget_allows_more(self, total: int, last: int) -> bool:
        budget = self.params.token_budget or 0
        if total >= BUDGET_COMPLETION_SHARE * budget:
            return False
        continuations = self.state.budget_continuations
        if continuations >= MAX_BUDGET_CONTINUATIONS:
            return False
        # Diminishing returns: the model keeps stopping after producing little.
        return not (continuations >= 2 and last < DIMINISHING_RETURNS_TOKENS)

    async def _recover_max_output(
        self, outcome: ModelOutcome, messages: list[Message]
    ) -> AsyncIterator[LoopEvent]:
        state = self.state
        ceiling = self.params.max_output_tokens_ceiling
        if state.max_output_tokens_override is None and self.params.max_output_tokens < ceiling:
            # Same request again with the model's maximum; the cut-off reply is voided.
            for message in outcome.assistant_messages:
                yield MessageEvent(tombstone(message.uuid, TombstoneReason.OUTPUT_ESCALATE))
            self._continue(
                Continue.MAX_OUTPUT_TOKENS_ESCALATE,
                [*self.messages, *self._summaries],
                max_output_tokens_override=ceiling,
            )
            return
        if state.max_output_tokens_recovery_count < MAX_OUTPUT_RECOVERIES:
            nudge = meta_user_message(prompts.MAX_OUTPUT_RECOVERY)
            yield MessageEvent(nudge)
            self._continue(
                Continue.MAX_OUTPUT_TOKENS_RECOVERY,
                [*messages, nudge],
                max_output_tokens_recovery_count=state.max_output_tokens_recovery_count + 1,
                max_output_tokens_override=state.max_output_tokens_override,
            )
            return
        yield self._terminal(
            Terminal.COMPLETED,
            messages,
            "The reply was cut off at the output token limit after "
            f"{MAX_OUTPUT_RECOVERIES} attempts to resume.",
        )

    async def _run_stop_hooks(
        self, outcome: ModelOutcome, messages: list[Message]
    ) -> AsyncIterator[LoopEvent]:
        if not self.params.stop_hooks:
            return
        last_text = "".join(text_of(m) for m in outcome.assistant_messages)
        hook_input = StopHookInput(
            messages=tuple(messages),
            last_assistant_text=last_text,
            stop_hook_active=self.state.stop_hook_active,
            session_id=self.params.session_id,
        )
        for hook in self.params.stop_hooks:
            result = await _run_stop_hook(hook, hook_input)
            if result is None or result.decision == "continue":
                continue
            if result.decision == "prevent":
                self._stopped = True
                yield self._terminal(
                    Terminal.STOP_HOOK_PREVENTED,
                    messages,
                    result.message or "A stop hook ended the conversation.",
                )
                return
            feedback = meta_user_message(f"Stop hook feedback:\n{result.message}")
            yield MessageEvent(feedback)
            self._continue(
                Continue.STOP_HOOK_BLOCKING,
                [*messages, feedback],
                stop_hook_active=True,
                output_tokens=self.state.output_tokens + outcome.usage.output_tokens,
            )
            return

    async def _tools_and_next_turn(self, outcome: ModelOutcome) -> AsyncIterator[LoopEvent]:
        messages = self._with_reply(outcome)
        results: list[Message] = []
        async for message in self._run_tools(outcome):
            results.append(message)
            yield MessageEvent(message)
        messages.extend(results)
        abort = self.params.tool_context.abort
        executor = outcome.executor
        if abort.aborted or (executor is not None and executor.aborted):
            notice = user_message(INTERRUPTED_FOR_TOOL_USE)
            yield MessageEvent(notice)
            yield self._terminal(
                Terminal.ABORTED_TOOLS, [*messages, notice], "Interrupted during tool use."
            )
            return
        if executor is not None and executor.stop_reason:
            yield self._terminal(Terminal.HOOK_STOPPED, messages, executor.stop_reason)
            return
        async for event in self._post_tool_batch(outcome, results, messages):
            yield event
        if self._stopped:
            return
        summarizer = self.params.tool_use_summarizer
        if summarizer is not None:
            self.pending = self.pending.start(summarizer, outcome.tool_uses, results)
        if self.params.attachments is not None:
            for attachment in await self.params.attachments(messages, self.params.tool_context):
                messages.append(attachment)
                yield MessageEvent(attachment)
        next_turn = self.state.turn_count + 1
        max_turns = self.params.max_turns
        if max_turns is not None and next_turn > max_turns:
            yield self._terminal(
                Terminal.MAX_TURNS, messages, f"Reached the maximum of {max_turns} turns."
            )
            return
        self._continue(
            Continue.NEXT_TURN,
            messages,
            turn_count=next_turn,
            max_output_tokens_recovery_count=0,
            # A turn got through: a later prompt-too-long may be compacted again.
            has_attempted_reactive_compact=False,
            output_tokens=self.state.output_tokens + outcome.usage.output_tokens,
        )

    async def _stop_failure(self, error: BaseException) -> None:
        """StopFailure hooks (instead of Stop hooks): their failure is logged, never raised."""
        hooks = self.params.loop_hooks
        if hooks is not None:
            try:
                await hooks.stop_failure(error, f"API Error: {error}")
            except Exception:
                log.exception("StopFailure hooks failed; ignoring them")

    async def _post_tool_batch(
        self, outcome: ModelOutcome, results: Sequence[Message], messages: list[Message]
    ) -> AsyncIterator[LoopEvent]:
        """PostToolBatch hooks once the whole batch resolved: context for the next request,
        or a block / `continue: false` that ends the loop before it (terminal hook_stopped)."""
        hooks = self.params.loop_hooks
        if hooks is None:
            return
        said = await hooks.post_tool_batch(ToolCallRecord.batch(outcome.tool_uses, results))
        if said.additional_context:
            context = meta_user_message(said.additional_context)
            messages.append(context)
            yield MessageEvent(context)
        stop = said.reason if said.blocked else said.stop_reason
        if stop:
            self._stopped = True
            yield self._terminal(Terminal.HOOK_STOPPED, messages, stop)

    async def _run_tools(self, outcome: ModelOutcome) -> AsyncIterator[Message]:
        for message in outcome.early_results:
            yield message
        if outcome.executor is not None:
            async for message in outcome.executor.get_remaining_results():
                yield message
            return
        async for message in run_tools(
            outcome.tool_uses,
            self.params.tools,
            self.params.tool_context,
            permission=self.params.permission,
            hooks=self.params.tool_hooks,
            max_concurrency=self.params.max_tool_concurrency,
        ):
            yield message


async def _run_stop_hook(hook: Any, hook_input: StopHookInput) -> StopHookResult | None:
    """A broken stop hook is logged and ignored: it must not end the session."""
    try:
        result: StopHookResult | None = await hook(hook_input)
        return result
    except Exception:
        log.exception("stop hook failed; ignoring it")
        return None


def compaction_event(
    messages: Sequence[Message], trigger: CompactTrigger, result: Any = None
) -> CompactionEvent:
    """The event that replaces the session's array with a compacted history (`result`, a
    compaction result, supplies the before/after sizes when it has them)."""
    return CompactionEvent(
        messages=tuple(messages),
        trigger=trigger,
        pre_tokens=int(getattr(result, "pre_tokens", 0) or 0),
        post_tokens=int(getattr(result, "post_tokens", 0) or 0),
    )
