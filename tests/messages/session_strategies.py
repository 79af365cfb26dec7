"""Hypothesis strategies: messy histories shaped like real sessions, with what they must keep.

Unlike `msg_strategies.internal_arrays` (arbitrary junk), these histories are what the
query loop and the session loader produce when things go wrong, all mixed together:
thinking blocks signed, unsigned or missing, interrupted tool calls with synthetic results,
dropped empty responses followed by a new prompt, responses split over several messages,
messages present twice (a transcript replayed), and compaction boundaries after which the
latest rounds are copied verbatim (fresh uuids, the same tool ids). Every text is unique,
so "no content twice" can be checked on the output.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import strategies as st

from queryloop.messages import (
    AssistantMessage,
    Attachment,
    AttachmentMessage,
    Message,
    ProgressMessage,
    SystemMessage,
    SystemSubtype,
    TextBlock,
    ThinkingBlock,
    ThinkingType,
    TombstoneMessage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from queryloop.messages.constructors import interrupted_result
from queryloop.messages.interruption import INTERRUPTED_BY_USER, Interruption


def examples(default: int) -> int:
    """`max_examples` for a property: `QUERYLOOP_FUZZ_EXAMPLES` overrides it (long local runs)."""
    return int(os.environ.get("QUERYLOOP_FUZZ_EXAMPLES", default))


@dataclass
class _Builder:
    """Appends messages with unique uuids, texts and tool ids."""

    messages: list[Message] = field(default_factory=list)
    n: int = 0

    def uid(self, kind: str) -> str:
        self.n += 1
        return f"{kind}{self.n}"

    def add(self, message: Message) -> Message:
        self.messages.append(message)
        return message


THINKING_STATES = ("signed", "unsigned", "missing", "cut")
"""How a response's thinking arrived; "cut": a signed block, then one the stream cut short."""


@st.composite
def sessions(draw: st.DrawFn) -> tuple[ThinkingType, list[Message]]:
    """(the request's thinking mode, a messy session history)."""
    mode = draw(st.sampled_from(list(ThinkingType)))
    b = _Builder()
    for _turn in range(draw(st.integers(1, 5))):
        _turn_of(draw, b)
    ending = draw(st.sampled_from(["prompt", "open_loop", "none"]))
    if ending == "prompt":
        _prompt(draw, b)
    elif ending == "open_loop":
        _open_loop(draw, b)
    return mode, b.messages


@st.composite
def last_turns(draw: st.DrawFn) -> list[Message]:
    """A messy history whose last turn is an unfinished tool loop: its responses' thinking
    signed, unsigned or missing, reminders, blank text, queued prompts or interruption
    notes beside the tool results, calls interrupted before their results (issue 25.12)."""
    b = _Builder()
    for _turn in range(draw(st.integers(0, 2))):
        _turn_of(draw, b)
    _open_loop(draw, b)
    return b.messages


EDGE_THINKING = ("signed", "unsigned", "missing", "cut", "dropped", "late")
"""How the thinking of a last-turn response arrived. Beyond `THINKING_STATES`: "dropped",
a signed block streamed as its own message and then voided by a tombstone (a stream retry);
"late", an unsigned block after the other blocks (an interleaved block the stream cut)."""

EDGE_FATES = ("results", "results", "interrupted", "orphaned", "synthetic", "streamed", "some")
"""What became of a last-turn response's calls: real results; none and the user's
interruption note; none at all (a crash: pairing answers them); stand-in results; results
that landed between the response's parts (streaming tool execution); only some answered."""


@st.composite
def edge_turns(draw: st.DrawFn) -> list[Message]:
    """A messy history whose last turn combines the edges one at a time is rarely enough for
    (issue 32.8): an unsigned, cut, dropped or missing thinking block; a response split over
    several messages with an attachment, a progress message or an empty text block between
    its parts; calls interrupted, orphaned, answered in part or answered between the parts;
    reminders, blank text and queued prompts beside the results. The array may end inside
    the tool loop, after the interruption note, or right after the response."""
    b = _Builder()
    for _turn in range(draw(st.integers(0, 2))):
        _turn_of(draw, b)
    _prompt(draw, b)
    for _step in range(draw(st.integers(1, 3))):
        if not _edge_step(draw, b):
            break
    return b.messages


def _edge_step(draw: st.DrawFn, b: _Builder) -> bool:
    """One last-turn response and what became of its calls; False ends the history."""
    mid = b.uid("msg")
    state = draw(st.sampled_from(EDGE_THINKING))
    parts, uses = _edge_parts(draw, mid, state)
    fate = draw(st.sampled_from(EDGE_FATES)) if uses else "none"
    answer_at = draw(st.integers(1, len(parts))) if fate == "streamed" else -1
    first = _emit_parts(draw, b, mid, parts, uses, answer_at)
    if state == "dropped" and len(parts) > 1:
        b.add(TombstoneMessage(target_uuid=first.uuid, uuid=b.uid("t")))
    if fate in ("none", "orphaned"):
        return fate == "none" and draw(st.booleans())
    if fate == "interrupted":
        uid = b.uid("i")
        b.add(UserMessage(content=f"{INTERRUPTED_BY_USER} {uid}", uuid=uid))
        return draw(st.booleans())
    if fate == "streamed":
        answered = _use_ids(parts[:answer_at])
        _results(draw, b, [u for u in uses if u.id not in answered])
        return True
    if fate == "some":
        _results(draw, b, uses[: draw(st.integers(0, len(uses) - 1))])
        return draw(st.booleans())
    _results(draw, b, uses, synthetic=fate == "synthetic")
    return True


def _edge_parts(
    draw: st.DrawFn, mid: str, state: str
) -> tuple[list[list[Any]], list[ToolUseBlock]]:
    """The response's blocks in parts: one part per block when it was streamed as one
    message per block, else a single part; and its tool calls."""
    parts: list[list[Any]] = []
    if state in ("signed", "cut", "dropped", "unsigned"):
        signature = "" if state == "unsigned" else "sig"
        parts.append([ThinkingBlock(thinking=f"plan {mid}", signature=signature)])
    if state == "cut":
        parts.append([ThinkingBlock(thinking=f"more {mid}", signature="")])
    if draw(st.booleans()):
        parts.append([TextBlock(text=f"say {mid}")])
    uses = [
        ToolUseBlock(id=f"toolu_{mid}_{k}", name="Bash", input={"n": f"{mid}.{k}"})
        for k in range(draw(st.integers(0, 2)))
    ]
    parts.extend([use] for use in uses)
    if state == "late":
        parts.append([ThinkingBlock(thinking=f"late {mid}", signature="")])
    if draw(st.booleans()):  # an empty text block among the parts
        at = draw(st.integers(0, len(parts)))
        parts.insert(at, [TextBlock(text=draw(st.sampled_from(["", " ", "\n"])))])
    if not parts:
        parts.append([TextBlock(text=f"say {mid}")])
    if not draw(st.booleans()):  # one message holding every block
        parts = [[block for part in parts for block in part]]
    return parts, uses


def _emit_parts(
    draw: st.DrawFn,
    b: _Builder,
    mid: str,
    parts: list[list[Any]],
    uses: list[ToolUseBlock],
    answer_at: int,
) -> Message:
    """Append the response's messages, with an attachment or a progress message between two
    of them, and (at `answer_at`) the results of the calls streamed so far; the first part."""
    between = draw(st.sampled_from(["nothing", "nothing", "attachment", "progress"]))
    at_between = draw(st.integers(1, len(parts))) if len(parts) > 1 else -1
    messages: list[Message] = []
    for index, part in enumerate(parts):
        if index == at_between and between == "attachment":
            aid = b.uid("att")
            kind = draw(st.sampled_from(["system_reminder", "text"]))
            b.add(
                AttachmentMessage(attachment=Attachment(kind, {"content": f"ctx {aid}"}), uuid=aid)
            )
        elif index == at_between and between == "progress":
            b.add(ProgressMessage(tool_use_id=uses[0].id if uses else "toolu_x", uuid=b.uid("p")))
        if index == answer_at:
            _results(draw, b, [u for u in uses if u.id in _use_ids(parts[:index])])
        messages.append(
            b.add(AssistantMessage(content=tuple(part), message_id=mid, uuid=b.uid("a")))
        )
    return messages[0]


def _use_ids(parts: list[list[Any]]) -> set[str]:
    return {block.id for part in parts for block in part if isinstance(block, ToolUseBlock)}


def _results(
    draw: st.DrawFn, b: _Builder, uses: list[ToolUseBlock], synthetic: bool = False
) -> None:
    """A user message answering `uses` (nothing when empty), with what may lie beside."""
    if not uses:
        return
    blocks: list[Any] = [
        interrupted_result(u.id, draw(st.sampled_from(Interruption)))
        if synthetic
        else ToolResultBlock(tool_use_id=u.id, content=f"out {u.id}")
        for u in uses
    ]
    beside = draw(st.sampled_from(["nothing", "nothing", "blank", "queued", "reminder"]))
    if beside == "blank":
        blocks.append(TextBlock(text=draw(st.sampled_from(["", " ", "\n"]))))
    elif beside == "queued":
        blocks.append(TextBlock(text=f"also {b.uid('q')}"))
    b.add(UserMessage(content=tuple(blocks), uuid=b.uid("r")))
    if beside == "reminder":
        aid = b.uid("rem")
        b.add(
            AttachmentMessage(
                attachment=Attachment("system_reminder", {"content": f"note {aid}"}), uuid=aid
            )
        )


def _turn_of(draw: st.DrawFn, b: _Builder) -> None:
    _prompt(draw, b)
    for _step in range(draw(st.integers(0, 3))):
        if not _step_of_loop(draw, b):
            break
    event = draw(st.sampled_from(["answer", "empty", "none", "compact", "replay"]))
    if event == "answer":
        _response(draw, b, tool_calls=0)
    elif event == "empty":
        # An empty response (dropped by normalization); the user just types again.
        b.add(AssistantMessage(content=(), message_id=b.uid("msg"), uuid=b.uid("e")))
    elif event == "compact":
        _compact(draw, b)
    elif event == "replay":
        _replay(draw, b)


def _open_loop(draw: st.DrawFn, b: _Builder) -> None:
    """A prompt and tool-loop steps, the last of them answered: the array ends in the loop."""
    _prompt(draw, b)
    for _step in range(draw(st.integers(0, 2))):
        if not _step_of_loop(draw, b):
            _prompt(draw, b)
    _step_of_loop(draw, b, answered=True)


def _prompt(draw: st.DrawFn, b: _Builder) -> None:
    uid = b.uid("u")
    b.add(UserMessage(content=f"prompt {uid}", uuid=uid))
    if draw(st.booleans()):
        aid = b.uid("att")
        b.add(AttachmentMessage(attachment=Attachment("text", {"content": f"ctx {aid}"}), uuid=aid))


def _step_of_loop(draw: st.DrawFn, b: _Builder, answered: bool = False) -> bool:
    """One model response with tool calls and what became of them; False ends the turn.

    `answered`: the calls got their results (the array may end here, inside the loop)."""
    uses = _response(draw, b, tool_calls=draw(st.integers(1, 3)))
    fates = ["results", "results", "interrupted", "synthetic", "lost"]
    fate = "results" if answered else draw(st.sampled_from(fates))
    if fate == "lost":  # a crash before any result was written (pairing must answer them)
        return False
    blocks: list[Any] = []
    for use in uses:
        if fate == "results":
            blocks.append(ToolResultBlock(tool_use_id=use.id, content=f"out {use.id}"))
        else:  # the loop (or the resume repair) answered them for the interrupted calls
            blocks.append(interrupted_result(use.id, draw(st.sampled_from(Interruption))))
    if draw(st.booleans()):
        blocks.reverse()
    beside = draw(st.sampled_from(["nothing", "nothing", "blank", "queued"]))
    if beside == "blank":  # an empty text block beside the results (dropped by normalization)
        blocks.append(TextBlock(text=draw(st.sampled_from(["", " ", "\n"]))))
    elif beside == "queued":  # a prompt typed while the tools ran, sent with their results
        blocks.append(TextBlock(text=f"also {b.uid('q')}"))
    b.add(UserMessage(content=tuple(blocks), uuid=b.uid("r")))
    if draw(st.integers(0, 3)) == 0:  # a reminder after the results (joins their message)
        aid = b.uid("rem")
        b.add(
            AttachmentMessage(
                attachment=Attachment("system_reminder", {"content": f"note {aid}"}), uuid=aid
            )
        )
    if fate == "interrupted":
        uid = b.uid("i")
        b.add(UserMessage(content=f"[Request interrupted by user] {uid}", uuid=uid))
        return False
    return True


def _response(draw: st.DrawFn, b: _Builder, tool_calls: int) -> list[ToolUseBlock]:
    mid = b.uid("msg")
    blocks: list[Any] = []
    state = draw(st.sampled_from(THINKING_STATES))
    if state != "missing":
        blocks.append(
            ThinkingBlock(thinking=f"plan {mid}", signature="" if state == "unsigned" else "sig")
        )
    if state == "cut":
        blocks.append(ThinkingBlock(thinking=f"more {mid}", signature=""))
    if draw(st.booleans()) or not tool_calls:
        blocks.append(TextBlock(text=f"say {mid}"))
    uses = [
        ToolUseBlock(id=f"toolu_{mid}_{k}", name="Bash", input={"n": f"{mid}.{k}"})
        for k in range(tool_calls)
    ]
    blocks.extend(uses)
    if draw(st.booleans()):  # streamed: one message per block, sharing the API message id
        for block in blocks:
            b.add(AssistantMessage(content=(block,), message_id=mid, uuid=b.uid("a")))
    else:
        b.add(AssistantMessage(content=tuple(blocks), message_id=mid, uuid=b.uid("a")))
    return uses


def _compact(draw: st.DrawFn, b: _Builder) -> None:
    """A compaction as `compact.restore.preserved_tail` makes it: boundary, summary, then
    copies of the latest complete rounds with fresh uuids and the same tool ids."""
    starts = [
        i
        for i, m in enumerate(b.messages)
        if isinstance(m, UserMessage) and isinstance(m.content, str)
    ]
    kept = (
        b.messages[draw(st.sampled_from(starts)) :]
        if len(starts) > 0 and draw(st.booleans())
        else []
    )
    b.add(SystemMessage(subtype=SystemSubtype.COMPACT_BOUNDARY, content="", uuid=b.uid("cb")))
    uid = b.uid("s")
    b.add(UserMessage(content=f"summary {uid}", is_compact_summary=True, uuid=uid))
    unique = {m.uuid: m for m in reversed(kept)}  # a replayed message is copied once
    b.messages.extend(replace(m, uuid=b.uid("k")) for m in reversed(unique.values()))


def _replay(draw: st.DrawFn, b: _Builder) -> None:
    """A transcript replayed: its last messages (or all of it) appended again, same uuids."""
    if not b.messages:
        return
    start = draw(st.integers(0, len(b.messages) - 1))
    b.messages.extend(b.messages[start:])


def from_last_boundary(messages: list[Message]) -> list[Message]:
    """What the query loop sends after a compaction: the array from the last boundary on."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, SystemMessage) and message.subtype is SystemSubtype.COMPACT_BOUNDARY:
            return messages[index:]
    return messages


def answered_calls(messages: list[Message]) -> dict[str, tuple[dict[str, Any], Any]]:
    """tool_use id -> (its input, the content of its first result after it), for every call
    that has a result in `messages`."""
    uses: dict[str, dict[str, Any]] = {}
    answered: dict[str, tuple[dict[str, Any], Any]] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    uses.setdefault(block.id, dict(block.input))
        elif isinstance(message, UserMessage) and not isinstance(message.content, str):
            for part in message.content:
                if isinstance(part, ToolResultBlock) and part.tool_use_id in uses:
                    answered.setdefault(part.tool_use_id, (uses[part.tool_use_id], part.content))
    return answered
