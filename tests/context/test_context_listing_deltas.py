"""Listing deltas, every kind: the attachment data and the text the model reads stay
byte-for-byte what they were before the four copies became one mechanism (the prompt cache
depends on it), and the set the history announces always equals the current set.

`golden/listing_deltas.json` was recorded from the four hand-written providers and renderers
(queryloop before issue 20): each scenario walks a sequence of states, storing every
attachment through the transcript encoding, with a compaction before the last state.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from queryloop.context import AttachmentContext, deltas
from queryloop.messages import (
    AttachmentMessage,
    Message,
    compact_boundary,
    message_from_dict,
    message_to_dict,
    user_message,
)
from queryloop.messages.attachments import RenderContext, render_attachment

GOLDEN = json.loads((Path(__file__).parent / "golden" / "listing_deltas.json").read_text())

FIELDS = {
    "deferred_tools_delta": "deferred_tools",
    "mcp_instructions_delta": "mcp_instructions",
    "agent_listing_delta": "agent_types",
    "skill_listing_delta": "skills",
}


def _stored(message: AttachmentMessage) -> AttachmentMessage:
    decoded = message_from_dict(message_to_dict(message))
    assert isinstance(decoded, AttachmentMessage)
    return decoded


def _text(message: AttachmentMessage) -> str | None:
    rendered = render_attachment(message, RenderContext())
    return None if rendered is None else rendered.text


async def _replay(kind: str, states: Sequence[Any]) -> list[dict[str, Any]]:
    provider = getattr(deltas, kind)
    history: list[Message] = [user_message("hi")]
    steps: list[dict[str, Any]] = []
    for index, state in enumerate(states):
        if index == len(states) - 1:
            # A compaction keeps only the newest delta: the rest is announced again.
            history = [compact_boundary("auto", 10), user_message("summary"), *history[-1:]]
        ctx = AttachmentContext(cwd=Path("/tmp"), **{FIELDS[kind]: state})
        got = [_stored(AttachmentMessage(attachment=a)) for a in await provider(ctx, history)]
        history.extend(AttachmentMessage(attachment=m.attachment, is_meta=True) for m in got)
        steps.append(
            {
                "state": state,
                "data": [dict(m.attachment.data) for m in got],
                "types": [m.attachment.type for m in got],
                "text": [_text(m) for m in got],
            }
        )
    return steps


async def test_every_kind_renders_and_reconstructs_exactly_as_recorded() -> None:
    assert set(GOLDEN) == set(FIELDS)
    for kind, recorded in GOLDEN.items():
        replayed = await _replay(kind, [step["state"] for step in recorded])
        for step, want in zip(replayed, recorded, strict=True):
            assert step == want, kind
            # Key order too: the transcript stores the data as it is built.
            assert [list(d) for d in step["data"]] == [list(d) for d in want["data"]], kind


_names = st.lists(st.sampled_from("abcdefg"), unique=True, max_size=5)
_described = st.dictionaries(st.sampled_from("abcdefg"), st.sampled_from(["", " x ", "y"]))


def _announced(kind: str, history: Sequence[Message]) -> set[str]:
    added, removed = (
        ("added_types", "removed_types")
        if kind == "agent_listing_delta"
        else ("added_names", "removed_names")
    )
    return deltas.announced_names(history, kind, added, removed)


async def _walk(kind: str, states: Sequence[Any]) -> None:
    history: list[Message] = []
    for state in states:
        ctx = AttachmentContext(cwd=Path("/tmp"), **{FIELDS[kind]: state})
        for attachment in await getattr(deltas, kind)(ctx, history):
            history.append(_stored(AttachmentMessage(attachment=attachment, is_meta=True)))
        current = state if not isinstance(state, Mapping) else dict(state)
        if kind == "mcp_instructions_delta":
            current = {k: v for k, v in current.items() if v.strip()}
        assert _announced(kind, history) == set(current)
        assert await getattr(deltas, kind)(ctx, history) == []  # nothing new: nothing sent


# Synchronous on purpose: hypothesis drives the examples, asyncio.run each walk.
@given(st.lists(_names, max_size=6))
def test_deferred_tools_history_announces_the_current_set(states: list[list[str]]) -> None:
    asyncio.run(_walk("deferred_tools_delta", states))


@given(
    st.sampled_from(["mcp_instructions_delta", "agent_listing_delta", "skill_listing_delta"]),
    st.lists(_described, max_size=6),
)
def test_described_listings_announce_the_current_set(
    kind: str, states: list[dict[str, str]]
) -> None:
    asyncio.run(_walk(kind, states))
