"""Token accounting: usage is the ground truth, the estimate covers only what came after."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import overload

from compact_testkit import history, tool_round, with_usage

from queryloop.compact import estimate_tokens, token_count_with_estimation
from queryloop.compact.tokens import IMAGE_TOKENS, estimate_message_tokens
from queryloop.messages import (
    ImageBlock,
    Message,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    assistant_message,
    compact_boundary,
    user_message,
)


def test_estimate_counts_text_tool_inputs_results_thinking_and_images() -> None:
    assert estimate_tokens([user_message("a" * 400)]) == 100
    use = assistant_message([ToolUseBlock(id="t", name="Bash", input={"command": "x" * 400})])
    assert estimate_message_tokens(use) > 100
    result = user_message([ToolResultBlock(tool_use_id="t", content="y" * 800)])
    assert estimate_message_tokens(result) == 200
    thinking = assistant_message([ThinkingBlock(thinking="z" * 40, signature="s")])
    assert estimate_message_tokens(thinking) == 10
    image = user_message([ImageBlock(source={"type": "base64", "data": "q" * 10_000})])
    assert estimate_message_tokens(image) == IMAGE_TOKENS


def test_count_is_last_usage_plus_estimate_of_later_messages() -> None:
    usage = Usage(input_tokens=1_000, cache_read_input_tokens=50_000, output_tokens=500)
    msgs = with_usage(history(3), usage)
    # The tool result after the last response is estimated; the response itself is in usage.
    assert token_count_with_estimation(msgs) == 51_500 + estimate_tokens(msgs[-1:])
    later = tool_round(9)
    expected = 51_500 + estimate_tokens([msgs[-1], *later])
    assert token_count_with_estimation(msgs + later) == expected


def test_usage_anchor_then_following_messages_are_estimated() -> None:
    usage = Usage(input_tokens=10, cache_creation_input_tokens=20, output_tokens=5)
    msgs = history(2)
    anchor_index = len(msgs) - 2  # the last assistant
    msgs[anchor_index] = replace(msgs[anchor_index], usage=usage)  # type: ignore[arg-type]
    expected = usage.context_tokens + estimate_tokens(msgs[anchor_index + 1 :])
    assert token_count_with_estimation(msgs) == expected
    # Never estimate-only when usage exists: a huge usage dominates a small history.
    assert token_count_with_estimation(msgs) < estimate_tokens(msgs) + usage.context_tokens


def test_split_response_sharing_an_id_is_not_counted_twice() -> None:
    usage = Usage(input_tokens=1_000)
    first = replace(assistant_message("part one", message_id="m1"), usage=usage)
    second = assistant_message("x" * 4_000, message_id="m1")
    msgs: list[Message] = [user_message("hi"), first, second]
    assert token_count_with_estimation(msgs) == 1_000


def test_usage_before_a_compact_boundary_is_ignored() -> None:
    old = replace(assistant_message("old"), usage=Usage(input_tokens=150_000))
    msgs: list[Message] = [user_message("hi"), old, compact_boundary("auto", 150_000)]
    msgs.append(user_message("summary " * 10))
    assert token_count_with_estimation(msgs) == estimate_tokens(msgs)


class CountingList(Sequence[Message]):
    """A sequence that counts element reads, to check the backwards scan stops early."""

    def __init__(self, items: list[Message]) -> None:
        self.items = items
        self.reads = 0

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if isinstance(index, slice):
            chunk = self.items[index]
            self.reads += len(chunk)
            return chunk
        self.reads += 1
        return self.items[index]


def test_cost_is_proportional_to_messages_since_last_usage() -> None:
    msgs = with_usage(history(2_000), Usage(input_tokens=5))
    msgs += tool_round(5_000)
    counting = CountingList(msgs)
    token_count_with_estimation(counting)
    assert counting.reads < 20  # not the 4,000+ messages of history
