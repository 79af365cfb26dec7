"""Per-session memos that keep the pipeline's per-iteration work proportional to what is new.

The loop appends to the message array, so the pipeline sees the same message objects again
and again. `TokenCounter` memoizes each message's estimate by identity and keeps running
sums for a growing sequence; `ToolNameIndex` folds tool_use names over a growing sequence;
`StableView` memoizes a per-turn stage; `changed_indices` finds where two same-length views
differ at C speed. All of them fall back to a full (still memoized) computation whenever the
input does not extend the last one.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from itertools import compress

from ..messages.blocks import ToolUseBlock
from ..messages.types import AssistantMessage, Message
from .tokens import estimate_message_tokens


def extends(current: Sequence[Message], previous: Sequence[Message]) -> bool:
    """True when `current` starts with the messages of `previous`.

    List equality compares by identity first (C speed, a few microseconds for thousands of
    messages) and falls back to value equality; messages are immutable values, and
    everything memoized here is a function of a message's value, so either is sound.
    """
    n = len(previous)
    return len(current) >= n and list(current[:n]) == list(previous)


def changed_indices(a: Sequence[Message], b: Sequence[Message]) -> list[int]:
    """Indices where two equally long sequences hold different objects."""
    if list(a) == list(b):
        return []
    same = map(operator.is_, a, b)
    return list(compress(range(len(a)), map(operator.not_, same)))


class TokenCounter:
    """`estimate_message_tokens` memoized by message identity (messages are immutable), and
    `estimate_tokens` of a growing sequence in O(new messages)."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[Message, int]] = {}
        self._seq: list[Message] = []
        self._total = 0

    def message(self, message: Message) -> int:
        """The estimate of one message (computed once per object)."""
        hit = self._memo.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        tokens = estimate_message_tokens(message)
        # The memo holds the message, so its id cannot be reused by another object.
        self._memo[id(message)] = (message, tokens)
        return tokens

    def total(self, messages: Sequence[Message]) -> int:
        """`estimate_tokens(messages)`; O(new) when `messages` extends the last call's."""
        if extends(messages, self._seq):
            self._total += sum(map(self.message, messages[len(self._seq) :]))
        else:
            self._total = sum(map(self.message, messages))
        self._seq = list(messages)
        if len(self._memo) > 4 * len(self._seq) + 1024:
            # Views that no longer exist (replaced, compacted) must not pin memory forever.
            self._memo = {id(m): (m, self.message(m)) for m in self._seq}
        return self._total

    def difference(self, before: Sequence[Message], after: Sequence[Message]) -> int:
        """``estimate_tokens(before) - estimate_tokens(after)``, looking only at the
        positions that differ when both are equally long."""
        if len(before) != len(after):
            return sum(map(self.message, before)) - sum(map(self.message, after))
        changed = changed_indices(before, after)
        return sum(self.message(before[i]) - self.message(after[i]) for i in changed)


class ToolNameIndex:
    """tool_use id -> tool name over a growing sequence (`rounds.tool_names_by_id`)."""

    def __init__(self) -> None:
        self._seq: list[Message] = []
        self._names: dict[str, str] = {}

    def names(self, messages: Sequence[Message]) -> dict[str, str]:
        """The mapping for `messages` (shared between calls: do not modify it)."""
        if extends(messages, self._seq):
            new = messages[len(self._seq) :]
        else:
            new, self._names = messages, {}
        for message in new:
            if isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, ToolUseBlock):
                        self._names[block.id] = block.name
        self._seq = list(messages)
        return self._names


def _last_assistant(messages: Sequence[Message]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], AssistantMessage):
            return index
    return 0


class StableView:
    """Memo of a per-message stage over a growing sequence (tool-result budget, clearing).

    `update(messages, key, run)` returns ``run(messages[start:])`` appended to the memoized
    output of ``messages[:start]``, where `start` is where the last call's open turn began
    (its last assistant message): the stages decide per turn, and decisions for earlier
    turns are sticky. A full run happens when `messages` does not extend the last input or
    `key` (the state the stage depends on) changed. Output messages equal to the last
    call's are the very same objects, so later stages and the request's incremental
    normalizer see an unchanged history by identity.
    """

    def __init__(self) -> None:
        self._inputs: list[Message] = []
        self._outputs: list[Message] = []
        self._key: object = None

    def update(
        self,
        messages: Sequence[Message],
        key: object,
        run: Callable[[Sequence[Message]], list[Message]],
    ) -> list[Message]:
        """The stage's output for `messages` (see the class docstring)."""
        start = 0
        if self._inputs and key == self._key and extends(messages, self._inputs):
            start = _last_assistant(self._inputs)
        fresh = run(messages[start:] if start else messages)
        out = self._outputs[:start]
        previous_in, previous_out = self._inputs, self._outputs
        for offset, message in enumerate(fresh):
            index = start + offset
            if (
                index < len(previous_out)
                and message is not messages[index]
                and index < len(previous_in)
                and previous_in[index] is messages[index]
                and previous_out[index] == message
            ):
                message = previous_out[index]
            out.append(message)
        self._inputs, self._outputs, self._key = list(messages), out, key
        return list(out)
