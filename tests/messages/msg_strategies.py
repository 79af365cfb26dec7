"""Hypothesis strategies: arbitrary internal message arrays, and valid ones."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from queryloop.messages import (
    AssistantMessage,
    Attachment,
    AttachmentMessage,
    ImageBlock,
    Message,
    ProgressMessage,
    RedactedThinkingBlock,
    ServerToolUseBlock,
    SystemMessage,
    SystemSubtype,
    TextBlock,
    ThinkingBlock,
    TombstoneMessage,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseSummaryMessage,
    UserMessage,
    WebSearchResult,
    WebSearchToolResultBlock,
)
from queryloop.messages.blocks import AssistantContentBlock, UserContentBlock

TOOLS: list[dict[str, Any]] = [
    {"name": "Read", "description": "read", "input_schema": {"type": "object"}},
    {"name": "Bash", "description": "run", "input_schema": {"type": "object"}},
]
TOOL_IDS = [f"toolu_{i}" for i in range(6)]
IMAGE = ImageBlock(source={"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="})

texts = st.sampled_from(["hello", "", " ", "\n\t", "ok ", "  padded  ", "done.", "x" * 50])
tool_ids = st.sampled_from(TOOL_IDS)


# Prebuilt pieces keep generation cheap: one draw picks a whole piece.
PARTS: list[UserContentBlock] = [
    TextBlock(text="part"),
    TextBlock(text=""),
    TextBlock(text=" \n"),
    IMAGE,
]
RESULT_CONTENTS: list[Any] = [
    "out",
    "",
    " ",
    (),
    (PARTS[0],),
    (PARTS[1], PARTS[3]),
    (PARTS[2],),
    (PARTS[3], PARTS[0]),
]
THINKING: list[AssistantContentBlock] = [
    ThinkingBlock(thinking="hmm", signature="sig"),
    ThinkingBlock(thinking="hmm", signature=""),
    RedactedThinkingBlock(data="enc"),
]
LATE_THINKING: list[AssistantContentBlock] = [
    ThinkingBlock(thinking="late", signature=""),
    ThinkingBlock(thinking="late", signature="s"),
]


SEARCH: list[AssistantContentBlock] = [
    ServerToolUseBlock(id="srvtoolu_1", name="web_search", input={"query": "q"}),
    WebSearchToolResultBlock(
        tool_use_id="srvtoolu_1", results=(WebSearchResult("https://a.org/", "A", "EqC"),)
    ),
]


@st.composite
def assistant_blocks(draw: st.DrawFn) -> list[AssistantContentBlock]:
    """Blocks of one model response, thinking first when present (as the API sends them)."""
    blocks: list[AssistantContentBlock] = [
        draw(st.sampled_from(THINKING)) for _ in range(draw(st.integers(0, 2)))
    ]
    for _ in range(draw(st.integers(0, 3))):
        choice = draw(st.integers(0, len(TOOL_IDS) + 2))
        if choice == len(TOOL_IDS) + 2:
            # A web search the server ran: its call and result, both in the response.
            blocks.extend(SEARCH)
        elif choice < len(TOOL_IDS):
            tid = TOOL_IDS[choice]
            blocks.append(
                ToolUseBlock(id=tid, name="Read" if choice % 2 else "Bash", input={"a": 1})
            )
        else:
            blocks.append(TextBlock(text=draw(texts)))
    if len(blocks) > 0 and draw(st.booleans()):
        # An interleaved-thinking or interrupted response: thinking after other blocks.
        blocks.append(draw(st.sampled_from(LATE_THINKING)))
    return blocks


def _result(draw: st.DrawFn) -> ToolResultBlock:
    content = draw(st.sampled_from(RESULT_CONTENTS))
    return ToolResultBlock(
        tool_use_id=draw(tool_ids), content=content, is_error=draw(st.booleans())
    )


@st.composite
def event(draw: st.DrawFn, index: int) -> list[Message]:
    """One or more internal messages of one kind; uuids are deterministic (m<index>)."""
    uid = f"m{index}"
    kind = draw(
        st.sampled_from(
            [
                "user_text",
                "user_blocks",
                "assistant",
                "assistant_split",
                "results",
                "attachment",
                "progress",
                "tombstone",
                "summary",
                "system",
                "virtual",
                "interrupt",
            ]
        )
    )
    common: dict[str, Any] = {"uuid": uid, "timestamp": "t"}
    if kind == "user_text":
        return [UserMessage(content=draw(texts), **common)]
    if kind == "user_blocks":
        parts = [draw(st.sampled_from(PARTS)) for _ in range(draw(st.integers(0, 3)))]
        return [UserMessage(content=tuple(parts), **common)]
    if kind == "results":
        results: list[UserContentBlock] = [_result(draw) for _ in range(draw(st.integers(1, 3)))]
        if draw(st.booleans()):
            results.append(TextBlock(text=draw(texts)))
        if draw(st.booleans()):
            results.reverse()
        return [UserMessage(content=tuple(results), **common)]
    if kind in ("assistant", "assistant_split"):
        blocks = draw(assistant_blocks())
        mid = draw(st.sampled_from(["msg_a", "msg_b", ""]))
        if kind == "assistant":
            return [AssistantMessage(content=tuple(blocks), message_id=mid, **common)]
        return [
            AssistantMessage(content=(b,), message_id=mid, uuid=f"{uid}_{k}", timestamp="t")
            for k, b in enumerate(blocks)
        ]
    if kind == "attachment":
        return [AttachmentMessage(attachment=draw(attachments()), **common)]
    if kind == "progress":
        return [ProgressMessage(tool_use_id=draw(tool_ids), data={"p": 1}, **common)]
    if kind == "tombstone":
        target = f"m{draw(st.integers(0, max(index + 2, 1)))}"
        return [TombstoneMessage(target_uuid=target, **common)]
    if kind == "summary":
        return [ToolUseSummaryMessage(summary="did things", **common)]
    if kind == "system":
        subtype = draw(st.sampled_from(list(SystemSubtype)))
        return [SystemMessage(subtype=subtype, content=draw(texts) or "out", **common)]
    if kind == "virtual":
        return [UserMessage(content="virtual", is_virtual=True, **common)]
    # An interrupted stream: unsigned thinking, a tool call without result, the user's note.
    return [
        AssistantMessage(
            content=(
                ThinkingBlock(thinking="partial"),
                ToolUseBlock(id=draw(tool_ids), name="Bash"),
            ),
            stop_reason=None,
            **common,
        ),
        UserMessage(content="[Request interrupted by user]", uuid=f"{uid}_i", timestamp="t"),
    ]


@st.composite
def attachments(draw: st.DrawFn) -> Attachment:
    kind = draw(
        st.sampled_from(["file", "directory", "text", "system_reminder", "mystery", "opaque"])
    )
    if kind == "file":
        data: dict[str, Any] = {
            "path": "/src/app.py",
            "content": draw(st.sampled_from(["", "a\nb\n", "x = 1"])),
        }
        if draw(st.booleans()):
            data.update(start_line=2, end_line=3, truncated=True)
        return Attachment(type="file", data=data)
    if kind == "directory":
        return Attachment(type="directory", data={"path": "/src", "listing": "a.py\nb.py"})
    if kind == "opaque":
        return Attachment(type="opaque", data={"value": 3})
    return Attachment(type=kind, data={"content": draw(texts)})


@st.composite
def internal_arrays(draw: st.DrawFn) -> list[Message]:
    """Arbitrary internal arrays: every message kind, orphans, duplicates, blanks."""
    out: list[Message] = []
    for index in range(draw(st.integers(0, 14))):
        out.extend(draw(event(index)))
    return out


@st.composite
def valid_arrays(draw: st.DrawFn, thinking: bool) -> list[Message]:
    """Internal arrays the API would accept as they are (content must all survive)."""
    out: list[Message] = []
    n = 0

    def uid() -> str:
        nonlocal n
        n += 1
        return f"v{n}"

    for turn in range(draw(st.integers(1, 4))):
        out.append(UserMessage(content=f"prompt {turn}", uuid=uid(), timestamp="t"))
        if draw(st.booleans()):
            out.append(
                AttachmentMessage(
                    attachment=Attachment("text", {"content": f"ctx {turn}"}),
                    uuid=uid(),
                    timestamp="t",
                )
            )
        steps = draw(st.integers(0, 2))
        for step in range(steps + 1):
            blocks: list[Any] = []
            if thinking and step == 0:
                blocks.append(ThinkingBlock(thinking="plan", signature="sig"))
            blocks.append(TextBlock(text=f"say {turn}.{step}"))
            last = step == steps
            ids = (
                [] if last else [f"toolu_{turn}_{step}_{k}" for k in range(draw(st.integers(1, 2)))]
            )
            blocks.extend(ToolUseBlock(id=i, name="Bash", input={"c": i}) for i in ids)
            mid = f"msg_{turn}_{step}"
            if draw(st.booleans()):
                out.extend(
                    AssistantMessage(content=(b,), message_id=mid, uuid=uid(), timestamp="t")
                    for b in blocks
                )
            else:
                out.append(
                    AssistantMessage(
                        content=tuple(blocks), message_id=mid, uuid=uid(), timestamp="t"
                    )
                )
            if ids:
                results = tuple(ToolResultBlock(tool_use_id=i, content=f"out {i}") for i in ids)
                out.append(UserMessage(content=results, uuid=uid(), timestamp="t"))
    ending = draw(st.sampled_from(["user", "tool_loop", "assistant"]))
    if ending == "tool_loop":
        # The request continues an unfinished tool loop (the turn opened with thinking).
        out.append(UserMessage(content="last prompt", uuid=uid(), timestamp="t"))
        first: list[Any] = [ThinkingBlock(thinking="go", signature="sig")] if thinking else []
        out.append(
            AssistantMessage(
                content=(*first, ToolUseBlock(id="toolu_end", name="Bash")),
                uuid=uid(),
                timestamp="t",
            )
        )
        out.append(
            UserMessage(
                content=(ToolResultBlock(tool_use_id="toolu_end", content="x"),),
                uuid=uid(),
                timestamp="t",
            )
        )
    elif ending == "user" or thinking:
        out.append(UserMessage(content="next", uuid=uid(), timestamp="t"))
    return out
