"""The query loop: an explicit state machine over the message array.

Each iteration runs the phases of docs/loop.md ("One iteration") in order:

    preprocess (budget → snip → microcompact → collapse → autocompact)
    → blocking-limit check → model call with fallback → abort check
    → no tool use: recovery, stop hooks, token budget, or completed
    → tool execution (a deferred call ends the run: terminal deferred)
    → attachments → max-turns check → next turn

A phase yields its events as they happen and, as its last item, what happened: `Next`
(the whole new `State`, its `Continue` reason in `transition`) or `End` (the
`TerminalEvent`, always the last event `query_loop()` yields).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeAlias

from ..hooks.types import HookOutcome, StopHook, StopHookInput, StopHookResult, ToolCallRecord
from ..messages.constructors import (
    answer_unanswered,
    meta_user_message,
    result_ids,
    system_message,
    text_of,
    tombstone,
    user_message,
)
from ..messages.deferral import pending_calls
from ..messages.interruption import INTERRUPTED_BY_USER, INTERRUPTED_FOR_TOOL_USE, Interruption
from ..messages.types import Message, SystemSubtype, TombstoneReason
from ..providers.errors import MediaError, PromptTooLongError
from ..tools.executor import run_tools
from . import prompts
from .deferred import deferred_detail
from .deps import CompactionOutcome, Compactor, PreprocessOutcome, QueryParams
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
from .state import End, Next, State, Step
from .structured import (
    MAX_STRUCTURED_OUTPUT_RETRIES,
    NOT_CALLED,
    OUTPUT_REQUIRED,
    batch_output,
    retries_exhausted,
)
from .summaries import outcome_events, settle_terminal

log = logging.getLogger(__name__)

MAX_OUTPUT_RECOVERIES = 3
BUDGET_COMPLETION_SHARE = 0.9
DIMINISHING_RETURNS_TOKENS = 500
MAX_BUDGET_CONTINUATIONS = 20

Phase: TypeAlias = AsyncIterator[LoopEvent | Step]
"""A phase that ends the iteration: its events, then (last) the `Step` it ended with."""


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
        step: Next | None = None
        async for item in _Iteration(params, state).run():
            if isinstance(item, Next):
                step = item
                continue
            for task_event in params.task_events() if params.task_events else ():
                yield task_event  # background tasks, between the loop's own events
            if isinstance(item, End):
                async for last in _last_events(params, item):
                    yield last
                return
            yield item
        assert step is not None, "an iteration ends with a Step"
        state = step.state
        assert state.transition is not None
        yield TransitionEvent(reason=state.transition, turn=state.turn_count)


async def _last_events(params: QueryParams, end: End) -> AsyncIterator[LoopEvent]:
    """The terminal event, after the summaries still being written that finish in time."""
    if not end.pending:
        yield end.terminal
        return
    aborted = params.tool_context.abort.aborted
    grace = params.summary_grace_s
    async for event in settle_terminal(end.pending, end.terminal, aborted=aborted, grace=grace):
        yield event


class _Iteration:
    """One pass through the phases: `run()` yields its events, then its `Step`."""

    def __init__(self, params: QueryParams, state: State) -> None:
        self.params = params
        self.state = state
        """The State this pass started from, with what the pass has changed so far (the
        tracking, the model, the summaries still running): what `Next` and `End` carry."""
        self.messages: list[Message] = list(state.messages)
        """The array as this pass's request sees it (after preprocessing)."""
        self._summaries: list[Message] = []
        """Tool-use summaries that finished during this pass's model call."""

    # ---- how an iteration ends -----------------------------------------------------------

    def _end(
        self,
        reason: Terminal,
        messages: Sequence[Message],
        detail: str = "",
        error: BaseException | None = None,
        output: Any = None,
    ) -> End:
        terminal = TerminalEvent(
            reason=reason,
            turn=self.state.turn_count,
            detail=detail,
            error=error,
            messages=tuple(messages),
            output=output,
        )
        return End(terminal, self.state.pending_tool_use_summary)

    def _with_reply(self, outcome: ModelOutcome) -> list[Message]:
        """The array after the model call: its reply, then summaries that finished meanwhile."""
        return [*self.messages, *outcome.assistant_messages, *self._summaries]

    # ---- the phases --------------------------------------------------------------------

    async def run(self) -> Phase:
        context_management: Mapping[str, Any] | None = None
        compactor = self.params.compactor
        if compactor is not None:
            prepared = await self._preprocess(compactor)
            if prepared.compacted and prepared.new_messages:
                yield compaction_event(
                    prepared.new_messages, CompactTrigger.AUTO, prepared.compaction
                )
            context_management = prepared.context_management
            if compactor.is_at_blocking_limit(self.messages):
                yield self._end(
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
        outcome: ModelOutcome | None = None
        async for item in call.run():
            if isinstance(item, ModelOutcome):
                outcome = item
            else:
                yield item
        assert outcome is not None, "a model call ends with its outcome"
        async for rest in self._after_call(outcome):
            yield rest

    async def _preprocess(self, compactor: Compactor) -> PreprocessOutcome:
        """The compaction pipeline's view becomes this pass's array; its tracking goes on
        in the state."""
        result = await compactor.preprocess(self.messages, self.state.autocompact_tracking)
        self.messages = list(result.messages_for_query)
        self.state = replace(self.state, autocompact_tracking=result.tracking)
        return result

    async def _after_call(self, outcome: ModelOutcome) -> Phase:
        """The summaries that finished meanwhile, then the branch the outcome calls for."""
        ready, pending = self.state.pending_tool_use_summary.take_ready()
        self.state = replace(self.state, model=outcome.model, pending_tool_use_summary=pending)
        self._summaries = [r.message for r in ready]
        for event in outcome_events(ready):
            yield event
        if self.params.tool_context.abort.aborted:
            branch = self._aborted_streaming(outcome)
        elif outcome.error is not None and not outcome.tool_uses:
            branch = self._on_error(outcome)
        elif not outcome.needs_follow_up and outcome.error is None:
            branch = self._on_stop(outcome)
        else:
            branch = self._tools_and_next_turn(outcome)
        async for item in branch:
            yield item

    async def _aborted_streaming(self, outcome: ModelOutcome) -> Phase:
        messages = self._with_reply(outcome)
        async for message in self._finish_tools_after_abort(outcome):
            messages.append(message)
            yield MessageEvent(message)
        notice = user_message(INTERRUPTED_BY_USER)
        messages.append(notice)
        yield MessageEvent(notice)
        yield self._end(Terminal.ABORTED_STREAMING, messages, "Interrupted by the user.")

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

    async def _on_error(self, outcome: ModelOutcome) -> Phase:
        error = outcome.error
        assert error is not None
        messages = self._with_reply(outcome)
        if isinstance(error, PromptTooLongError):
            async for item in self._recover_prompt_too_long(error):
                yield item
            return
        notice = system_message(SystemSubtype.API_ERROR, str(error), level="error")
        yield MessageEvent(notice)
        await self._stop_failure(error)
        reason = Terminal.IMAGE_ERROR if isinstance(error, MediaError) else Terminal.MODEL_ERROR
        yield self._end(reason, [*messages, notice], str(error), error)

    async def _recover_prompt_too_long(self, error: PromptTooLongError) -> Phase:
        """Cheapest first: drain staged collapses, then compact once, else give up."""
        compactor = self.params.compactor
        if compactor is not None:
            if self.state.transition != Continue.COLLAPSE_DRAIN_RETRY:
                if await compactor.drain_collapses():
                    retry = [*self.messages, *self._summaries]
                    yield Next(self.state.continued(Continue.COLLAPSE_DRAIN_RETRY, retry))
                    return
            if not self.state.has_attempted_reactive_compact:
                result = await compactor.reactive(self.messages, error)
                if result is not None:
                    compacted = list(result.messages)
                    yield compaction_event(compacted, CompactTrigger.REACTIVE, result)
                    state = self.state.continued(Continue.REACTIVE_COMPACT_RETRY, compacted)
                    yield Next(replace(state, has_attempted_reactive_compact=True))
                    return
        notice = system_message(SystemSubtype.API_ERROR, str(error), level="error")
        yield MessageEvent(notice)
        await self._stop_failure(error)
        yield self._end(
            Terminal.PROMPT_TOO_LONG,
            [*self.messages, notice],
            f"The prompt is too long for the model and compaction could not shrink it: {error}",
            error,
        )

    async def _on_stop(self, outcome: ModelOutcome) -> Phase:
        """The model stopped without tools: recover a cut-off, consult stop hooks and the
        token budget, or complete."""
        state = self.state
        messages = self._with_reply(outcome)
        output_tokens = state.output_tokens + outcome.usage.output_tokens
        if outcome.stop_reason == "max_tokens":
            async for item in self._recover_max_output(outcome, messages):
                yield item
            return
        if self.params.output_tool is not None:
            async for item in self._require_output(messages):
                yield item
            return
        verdict = await self._stop_hook_verdict(outcome, messages)
        if verdict is not None:
            async for item in self._obey_stop_hook(verdict, messages, output_tokens):
                yield item
            return
        budget = self.params.token_budget
        if budget and self._budget_allows_more(output_tokens, outcome.usage.output_tokens):
            nudge = meta_user_message(prompts.token_budget_nudge(output_tokens, budget))
            yield MessageEvent(nudge)
            next_state = state.continued(Continue.TOKEN_BUDGET_CONTINUATION, [*messages, nudge])
            yield Next(
                replace(
                    next_state,
                    budget_continuations=state.budget_continuations + 1,
                    output_tokens=output_tokens,
                )
            )
            return
        yield self._end(Terminal.COMPLETED, messages)

    async def _require_output(self, messages: list[Message]) -> Phase:
        """The model stopped without returning the structured output: tell it to call the
        tool (a failed attempt), or end once the attempts are spent."""
        failures = self.state.output_retries + 1
        if failures > MAX_STRUCTURED_OUTPUT_RETRIES:
            detail = retries_exhausted(failures, NOT_CALLED)
            yield self._end(Terminal.MAX_STRUCTURED_OUTPUT_RETRIES, messages, detail)
            return
        nudge = meta_user_message(OUTPUT_REQUIRED)
        yield MessageEvent(nudge)
        state = self.state.continued(Continue.STRUCTURED_OUTPUT_REQUIRED, [*messages, nudge])
        yield Next(replace(state, output_retries=failures))

    async def _settle_output(
        self, outcome: ModelOutcome, results: Sequence[Message], messages: list[Message]
    ) -> Phase:
        """After a batch: end the query with its structured output when a call returned a
        valid one (Stop hooks are asked first, as for any stop: a block sends the model
        back to work and it returns its output again), or when failed calls spent the last
        attempt. Yields nothing when the query goes on (a failed call counts; its is_error
        result tells the model what was wrong)."""
        tool = self.params.output_tool
        if tool is None:
            return
        found = batch_output(tool, outcome.tool_uses, results)
        if found.accepted is not None:
            value = found.accepted.value
            verdict = await self._stop_hook_verdict(outcome, messages)
            if verdict is None:
                yield self._end(Terminal.COMPLETED, messages, output=value)
                return
            spent = self.state.output_tokens + outcome.usage.output_tokens
            async for item in self._obey_stop_hook(verdict, messages, spent, output=value):
                yield item
            return
        if not found.error:
            return
        failures = self.state.output_retries + 1
        self.state = replace(self.state, output_retries=failures)
        if failures > MAX_STRUCTURED_OUTPUT_RETRIES:
            detail = retries_exhausted(failures, found.error)
            yield self._end(Terminal.MAX_STRUCTURED_OUTPUT_RETRIES, messages, detail)

    def _budget_allows_more(self, total: int, last: int) -> bool:
        budget = self.params.token_budget or 0
        if total >= BUDGET_COMPLETION_SHARE * budget:
            return False
        continuations = self.state.budget_continuations
        if continuations >= MAX_BUDGET_CONTINUATIONS:
            return False
        # Diminishing returns: the model keeps stopping after producing little.
        return not (continuations >= 2 and last < DIMINISHING_RETURNS_TOKENS)

    async def _recover_max_output(self, outcome: ModelOutcome, messages: list[Message]) -> Phase:
        state = self.state
        ceiling = self.params.max_output_tokens_ceiling
        if state.max_output_tokens_override is None and self.params.max_output_tokens < ceiling:
            # Same request again with the model's maximum; the cut-off reply is voided.
            for message in outcome.assistant_messages:
                yield MessageEvent(tombstone(message.uuid, TombstoneReason.OUTPUT_ESCALATE))
            retry = [*self.messages, *self._summaries]
            next_state = state.continued(Continue.MAX_OUTPUT_TOKENS_ESCALATE, retry)
            yield Next(replace(next_state, max_output_tokens_override=ceiling))
            return
        if state.max_output_tokens_recovery_count < MAX_OUTPUT_RECOVERIES:
            nudge = meta_user_message(prompts.MAX_OUTPUT_RECOVERY)
            yield MessageEvent(nudge)
            next_state = state.continued(Continue.MAX_OUTPUT_TOKENS_RECOVERY, [*messages, nudge])
            yield Next(
                replace(
                    next_state,
                    max_output_tokens_recovery_count=state.max_output_tokens_recovery_count + 1,
                    # An escalated limit stays raised while the reply is resumed.
                    max_output_tokens_override=state.max_output_tokens_override,
                )
            )
            return
        yield self._end(
            Terminal.COMPLETED,
            messages,
            "The reply was cut off at the output token limit after "
            f"{MAX_OUTPUT_RECOVERIES} attempts to resume.",
        )

    async def _stop_hook_verdict(
        self, outcome: ModelOutcome, messages: list[Message]
    ) -> StopHookResult | None:
        """The first stop hook's result that blocks or prevents the stop (None: stop)."""
        if not self.params.stop_hooks:
            return None
        last_text = "".join(text_of(m) for m in outcome.assistant_messages)
        hook_input = StopHookInput(
            messages=tuple(messages),
            last_assistant_text=last_text,
            stop_hook_active=self.state.stop_hook_active,
            session_id=self.params.session_id,
        )
        for hook in self.params.stop_hooks:
            result = await _run_stop_hook(hook, hook_input)
            if result is not None and result.decision != "continue":
                return result
        return None

    async def _obey_stop_hook(
        self,
        verdict: StopHookResult,
        messages: list[Message],
        output_tokens: int,
        output: Any = None,
    ) -> Phase:
        """`prevent` ends the query (with the structured output it was about to return, if
        any); `block` injects the hook's message and goes on."""
        if verdict.decision == "prevent":
            detail = verdict.message or "A stop hook ended the conversation."
            yield self._end(Terminal.STOP_HOOK_PREVENTED, messages, detail, output=output)
            return
        feedback = meta_user_message(f"Stop hook feedback:\n{verdict.message}")
        yield MessageEvent(feedback)
        next_state = self.state.continued(Continue.STOP_HOOK_BLOCKING, [*messages, feedback])
        yield Next(replace(next_state, stop_hook_active=True, output_tokens=output_tokens))

    async def _tools_and_next_turn(self, outcome: ModelOutcome) -> Phase:
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
            yield self._end(
                Terminal.ABORTED_TOOLS, [*messages, notice], "Interrupted during tool use."
            )
            return
        if executor is not None and executor.stop_reason:
            yield self._end(Terminal.HOOK_STOPPED, messages, executor.stop_reason)
            return
        deferred = pending_calls(results)
        if deferred:
            # The other calls of the batch ran and their results are recorded; the deferred
            # ones stay unanswered until a decision (`loop.deferred`): no request is sent.
            yield self._end(Terminal.DEFERRED, messages, deferred_detail(deferred))
            return
        said = await self._post_tool_batch(outcome, results)
        if said is not None and said.additional_context:
            context = meta_user_message(said.additional_context)
            messages.append(context)
            yield MessageEvent(context)
        stop = None if said is None else said.reason if said.blocked else said.stop_reason
        if stop:
            yield self._end(Terminal.HOOK_STOPPED, messages, stop)
            return
        settled = False
        async for item in self._settle_output(outcome, results, messages):
            settled = True  # it ended the iteration (its last item is the Step)
            yield item
        if settled:
            return
        async for item in self._next_turn(outcome, results, messages):
            yield item

    async def _next_turn(
        self, outcome: ModelOutcome, results: Sequence[Message], messages: list[Message]
    ) -> Phase:
        """The batch is done: summarize it, add attachments, and start the next turn unless
        that would pass `max_turns`."""
        summarizer = self.params.tool_use_summarizer
        if summarizer is not None:
            pending = self.state.pending_tool_use_summary.start(
                summarizer, outcome.tool_uses, results
            )
            self.state = replace(self.state, pending_tool_use_summary=pending)
        if self.params.attachments is not None:
            for attachment in await self.params.attachments(messages, self.params.tool_context):
                messages.append(attachment)
                yield MessageEvent(attachment)
        next_turn = self.state.turn_count + 1
        max_turns = self.params.max_turns
        if max_turns is not None and next_turn > max_turns:
            yield self._end(
                Terminal.MAX_TURNS, messages, f"Reached the maximum of {max_turns} turns."
            )
            return
        output_tokens = self.state.output_tokens + outcome.usage.output_tokens
        yield Next(replace(self.state.next_turn(messages), output_tokens=output_tokens))

    async def _stop_failure(self, error: BaseException) -> None:
        """StopFailure hooks (instead of Stop hooks): their failure is logged, never raised."""
        hooks = self.params.loop_hooks
        if hooks is not None:
            try:
                await hooks.stop_failure(error, f"API Error: {error}")
            except Exception:
                log.exception("StopFailure hooks failed; ignoring them")

    async def _post_tool_batch(
        self, outcome: ModelOutcome, results: Sequence[Message]
    ) -> HookOutcome | None:
        """PostToolBatch hooks once the whole batch resolved: context for the next request,
        or a block / `continue: false` that ends the loop before it (terminal hook_stopped).
        None: no loop hooks."""
        hooks = self.params.loop_hooks
        if hooks is None:
            return None
        return await hooks.post_tool_batch(ToolCallRecord.batch(outcome.tool_uses, results))

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


async def _run_stop_hook(hook: StopHook, hook_input: StopHookInput) -> StopHookResult | None:
    """A broken stop hook is logged and ignored: it must not end the session."""
    try:
        return await hook(hook_input)
    except Exception:
        log.exception("stop hook failed; ignoring it")
        return None


def compaction_event(
    messages: Sequence[Message], trigger: CompactTrigger, result: CompactionOutcome | None = None
) -> CompactionEvent:
    """The event that replaces the session's array with a compacted history (`result`, the
    compaction, supplies the before/after sizes; without one they are 0)."""
    return CompactionEvent(
        messages=tuple(messages),
        trigger=trigger,
        pre_tokens=result.pre_tokens if result is not None else 0,
        post_tokens=result.post_tokens if result is not None else 0,
    )
