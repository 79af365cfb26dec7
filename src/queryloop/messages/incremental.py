"""`IncrementalNormalizer`: normalize only what is new since the last request.

The query loop appends to the internal array, so each request's array starts with the
previous one's (the same objects). The normalizer keeps a checkpoint: the normalized output
of a prefix ``cur[:j]``; a later array that still starts with exactly those objects is
normalized as ``checkpoint.output + normalize_tail(cur[j:])``, which costs O(new messages)
plus an identity scan of the prefix.

Why that equals `normalize_messages_for_api(cur)` (docs/messages.md has the long form) —
the checkpoint is only placed at a *safe split* j, with thinking off or adaptive (every
thinking pass then treats each message alone; extended thinking's final-turn rule looks
back across the tool loop, so `enabled` always runs in full), where:

* ``cur[j]`` is a kept assistant message (not virtual, not an API error) with a tool_use
  or a non-blank text block, so it survives every pass and starts the tail's output; it is
  a stop point of `reorder_attachments`, so no attachment crosses j;
* the prefix's last draft (rendered message) is a user one, so merging sees a user message
  last before j, and ``cur[j]``'s message id is empty or appears on no assistant message
  before j, so no split response is joined across j;
* the prefix's own normalized output is non-empty and ends with a user message, so no pass
  that merges neighbours (pairing, `merge_same_roles`) joins across j;
* no tombstone voids a message on the other side of j, nor ``cur[j]`` itself (so removing
  voided messages treats both sides alone);
* no tool_use or tool_result in the tail names a tool_use id of the prefix, so pairing
  (which matches results to uses globally and drops repeated ids) treats both sides alone;
* no message of the tail has the uuid of a message before it (``cur[j]`` included), so
  `dedupe_by_uuid` drops nothing across j;
* the tail holds no compact boundary (`drop_before_compact_boundary` would cut the prefix).

The tail is normalized with `NormalizeContext.continuation` (no leading placeholder: the
prefix starts the request); every other pass is the same code. When any condition fails,
the array is normalized in full. The property tests compare both, byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .api_types import ApiMessage
from .blocks import TextBlock, ToolUseBlock
from .normalize import PASSES, NormalizeContext, check_invariants, run_passes
from .normalize_context import make_context
from .thinking_mode import ThinkingSpec, ThinkingType
from .types import AssistantMessage, Message, SystemMessage, SystemSubtype, TombstoneMessage

_NAMES = [name for name, _ in PASSES]
_MERGE = _NAMES.index("merge_messages")
_PAIRING = _NAMES.index("pair_tool_results")
_TO_DRAFTS = PASSES[:_MERGE]
_BEFORE_PAIRING = PASSES[_MERGE:_PAIRING]
_PAIR = PASSES[_PAIRING : _PAIRING + 1]
_AFTER_PAIRING = tuple(p for p in PASSES[_PAIRING + 1 :] if p[0] != "check_invariants")


@dataclass(slots=True)
class _Checkpoint:
    """The normalized output of ``inputs`` (a prefix of the last array) and what the safety
    conditions need to know about it."""

    ctx: NormalizeContext
    inputs: list[Message]
    anchor: Message
    """The message right after the prefix (checked to be a safe split when chosen)."""
    output: list[ApiMessage]
    tool_ids: set[str]
    """tool_use ids of the prefix (as pairing sees them)."""
    message_ids: set[str]
    """API message ids of the prefix's assistant messages."""
    uuids: set[str]
    """uuids of the prefix's messages."""
    targets: set[str]
    """uuids the prefix's tombstones void."""


@dataclass(frozen=True, slots=True)
class _Run:
    output: list[ApiMessage]
    use_ids: set[str]
    result_ids: set[str]
    ends_with_user: bool
    """Whether the last draft (before merging) and the output both end with the user."""


class IncrementalNormalizer:
    """`normalize_messages_for_api` for a growing array (one instance per session).

    `normalize` always returns exactly what `normalize_messages_for_api` returns for the same
    arguments. The returned message dicts of the prefix are shared between calls: callers
    must copy before modifying (the request builder's cache breakpoints already do).
    """

    def __init__(self) -> None:
        self._checkpoint: _Checkpoint | None = None
        self.full_runs = 0
        """How many calls normalized the whole array (for tests and diagnostics)."""
        self.messages_normalized = 0
        """How many internal messages went through the passes, over all calls."""

    def normalize(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        thinking: ThinkingSpec = ThinkingType.ENABLED,
        thinking_enabled: bool | None = None,
        prefill: bool = True,
    ) -> list[ApiMessage]:
        """Same contract and result as `normalize_messages_for_api(messages, tools, ...)`."""
        ctx = make_context(tools, thinking, thinking_enabled, prefill)
        current = list(messages)
        if ctx.thinking is not ThinkingType.ENABLED:
            result = self._incremental(current, ctx)
            if result is not None:
                return result
        # Extended thinking (its final-turn rule looks back across the tool loop, which may
        # reach into the prefix) or no safe split. The checkpoint stays: a one-off different
        # array (a context-size probe) does not cost the session's next request a full run.
        self.full_runs += 1
        self.messages_normalized += len(current)
        output: list[ApiMessage] = run_passes(current, ctx, PASSES)
        return output

    def _incremental(
        self, current: list[Message], ctx: NormalizeContext
    ) -> list[ApiMessage] | None:
        checkpoint = self._checkpoint
        if checkpoint is not None and checkpoint.ctx == ctx and _continues(current, checkpoint):
            result = self._from_checkpoint(current, checkpoint)
            if result is not None:
                return result
        checkpoint = self._fresh_checkpoint(current, ctx)
        if checkpoint is None:
            return None
        self._checkpoint = checkpoint
        return self._from_checkpoint(current, checkpoint)

    def reset(self) -> None:
        """Forget the checkpoint (the next call normalizes from scratch)."""
        self._checkpoint = None

    # -- internals ----------------------------------------------------------------------

    def _run(self, messages: list[Message], ctx: NormalizeContext) -> _Run:
        self.messages_normalized += len(messages)
        drafts = run_passes(messages, ctx, _TO_DRAFTS)
        last_draft_user = bool(drafts) and drafts[-1][0] == "user"
        merged = run_passes(drafts, ctx, _BEFORE_PAIRING)
        use_ids, result_ids = _tool_ids(merged)
        paired = run_passes(merged, ctx, _PAIR)
        # Judged right after pairing: later passes may still drop a final assistant message
        # that pairing left holding only thinking (in the full array it would join the next
        # one), and ensure_alternation's "Continue." after a final assistant message
        # (thinking on, or no prefill) is not the user ending the prefix.
        ends = last_draft_user and bool(paired) and paired[-1]["role"] == "user"
        output = run_passes(paired, ctx, _AFTER_PAIRING)
        return _Run(output, use_ids, result_ids, ends)

    def _fresh_checkpoint(
        self, current: list[Message], ctx: NormalizeContext
    ) -> _Checkpoint | None:
        split = _last_safe_split(current, 0, set(), set())
        if split is None:
            return None
        prefix = self._run(current[:split], ctx)
        if not prefix.ends_with_user:
            return None
        uuids, targets = _uuids_and_targets(current[:split])
        return _Checkpoint(
            ctx=ctx,
            inputs=current[:split],
            anchor=current[split],
            output=prefix.output,
            tool_ids=prefix.use_ids,
            message_ids=set(_message_ids(current[:split])),
            uuids=uuids,
            targets=targets,
        )

    def _from_checkpoint(self, current: list[Message], cp: _Checkpoint) -> list[ApiMessage] | None:
        start = len(cp.inputs)
        tail = current[start:]
        uuids, targets = _uuids_and_targets(tail)
        if not (targets.isdisjoint(cp.uuids) and cp.targets.isdisjoint(uuids)):
            return None  # a tombstone voids a message across the split
        if cp.anchor.uuid in targets or not uuids.isdisjoint(cp.uuids):
            return None  # a message voided, or repeated, across the split
        if any(_is_compact_boundary(m) for m in tail):
            return None  # a compaction: what came before is no longer sent
        run = self._run(tail, replace(cp.ctx, continuation=True))
        if not cp.tool_ids.isdisjoint(run.use_ids) or not cp.tool_ids.isdisjoint(run.result_ids):
            return None
        output = cp.output + run.output
        check_invariants(output, cp.ctx)
        self._advance(current, cp)
        return output

    def _advance(self, current: list[Message], cp: _Checkpoint) -> None:
        """Move the checkpoint to the last safe split of `current` (the tail's conditions,
        just checked, hold for every part of it)."""
        start = len(cp.inputs)
        split = _last_safe_split(current, start, cp.message_ids, cp.uuids, lowest=start + 1)
        if split is None:
            return
        part = self._run(current[start:split], replace(cp.ctx, continuation=True))
        if not part.ends_with_user:
            return
        cp.output = cp.output + part.output
        cp.inputs = current[:split]
        cp.anchor = current[split]
        cp.tool_ids |= part.use_ids
        cp.message_ids |= set(_message_ids(current[start:split]))
        uuids, targets = _uuids_and_targets(current[start:split])
        cp.uuids |= uuids
        cp.targets |= targets


def _continues(current: list[Message], cp: _Checkpoint) -> bool:
    """True when `current` starts with the checkpoint's messages and its anchor."""
    n = len(cp.inputs)
    if len(current) <= n or current[n] != cp.anchor:
        return False
    # List equality compares by identity first (C speed) and then by value; messages are
    # immutable values and normalization is a function of the values, so both are sound.
    return current[:n] == cp.inputs


def _uuids_and_targets(messages: Sequence[Message]) -> tuple[set[str], set[str]]:
    """The messages' uuids, and the uuids their tombstones void."""
    targets = {m.target_uuid for m in messages if isinstance(m, TombstoneMessage)}
    return {m.uuid for m in messages}, targets


def _message_ids(messages: Iterable[Message]) -> Iterable[str]:
    return (m.message_id for m in messages if isinstance(m, AssistantMessage) and m.message_id)


def _last_safe_split(
    messages: list[Message],
    start: int,
    ids_before_start: set[str],
    uuids_before_start: set[str],
    *,
    lowest: int = 1,
) -> int | None:
    """The largest j >= `lowest` whose message boundary is a safe split (see the module
    docstring); `ids_before_start` holds the assistant message ids of ``messages[:start]``,
    `uuids_before_start` their uuids."""
    first_of = _first_indexes(messages, start)
    for j in range(len(messages) - 1, max(lowest, 1) - 1, -1):
        message = messages[j]
        if not isinstance(message, AssistantMessage) or not _is_anchor(message):
            continue
        if first_of.get(message.uuid) != j or message.uuid in uuids_before_start:
            continue  # a repeat of an earlier message: dedupe_by_uuid drops it
        mid = message.message_id
        if mid and (mid in ids_before_start or mid in set(_message_ids(messages[start:j]))):
            continue
        return j
    return None


def _is_compact_boundary(message: Message) -> bool:
    return isinstance(message, SystemMessage) and message.subtype is SystemSubtype.COMPACT_BOUNDARY


def _first_indexes(messages: list[Message], start: int) -> dict[str, int]:
    """uuid -> index of its first message at or after `start`."""
    first: dict[str, int] = {}
    for index in range(start, len(messages)):
        first.setdefault(messages[index].uuid, index)
    return first


def _is_anchor(message: AssistantMessage) -> bool:
    if message.is_virtual or message.is_api_error:
        return False
    return any(
        isinstance(b, ToolUseBlock) or (isinstance(b, TextBlock) and b.text.strip())
        for b in message.content
    )


def _tool_ids(messages: list[ApiMessage]) -> tuple[set[str], set[str]]:
    """tool_use ids and tool_result tool_use_ids present in `messages` (API form)."""
    uses: set[str] = set()
    results: set[str] = set()
    for message in messages:
        for block in message["content"]:
            kind = block.get("type")
            if kind == "tool_use":
                uses.add(str(block.get("id")))
            elif kind == "tool_result":
                results.add(str(block.get("tool_use_id")))
    return uses, results
