"""The attachment renderer registry and the built-in renderers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from queryloop.messages import (
    AttachmentMessage,
    RenderContext,
    RenderedAttachment,
    ToolResultBlock,
    ToolUseBlock,
    attachment_message,
    normalize_messages_for_api,
    register_attachment_renderer,
    render_attachment,
    stable_tool_use_id,
    unregister_attachment_renderer,
    user_message,
)

WITH_READ = RenderContext(tool_names=frozenset({"Read"}))


def test_text_and_system_reminder_render_as_reminders() -> None:
    for kind in ("text", "system_reminder"):
        out = render_attachment(attachment_message(kind, content="be careful"), RenderContext())
        assert out == RenderedAttachment(text="<system-reminder>\nbe careful\n</system-reminder>")


def test_directory_renders_path_and_listing() -> None:
    out = render_attachment(
        attachment_message("directory", path="/src", listing=["a.py", "b.py"]), RenderContext()
    )
    assert (
        out is not None
        and out.text
        == "<system-reminder>\nContents of directory /src:\na.py\nb.py\n</system-reminder>"
    )


def test_file_becomes_a_synthetic_read_with_stable_ids() -> None:
    att = attachment_message(
        "file", path="/p/a.py", content="x\ny", start_line=10, end_line=11, truncated=True
    )
    out = render_attachment(att, WITH_READ)
    assert out is not None and out.text is None
    assert out.tool_use == ToolUseBlock(
        id=stable_tool_use_id(att.uuid),
        name="Read",
        input={"file_path": "/p/a.py", "offset": 10, "limit": 2},
    )
    assert isinstance(out.tool_result, ToolResultBlock)
    assert out.tool_result.tool_use_id == out.tool_use.id
    assert (
        out.tool_result.content
        == "    10\tx\n    11\ty\n[File truncated: only part of it is shown. Read it to see more.]"
    )
    assert render_attachment(att, WITH_READ) == out
    assert stable_tool_use_id(att.uuid).startswith("toolu_att_")
    assert stable_tool_use_id("other") != stable_tool_use_id(att.uuid)


def test_file_without_read_tool_or_with_thinking_is_reminder_text() -> None:
    att = attachment_message("file", path="a.py", content="x")
    for ctx in (
        RenderContext(),
        RenderContext(tool_names=frozenset({"Read"}), thinking_enabled=True),
    ):
        out = render_attachment(att, ctx)
        assert out is not None and out.tool_use is None
        assert out.text == "<system-reminder>\nContents of a.py:\n     1\tx\n</system-reminder>"


def test_unknown_types_use_content_or_are_dropped() -> None:
    assert render_attachment(
        attachment_message("mystery", content="hi"), RenderContext()
    ) == RenderedAttachment(text="<system-reminder>\nhi\n</system-reminder>")
    assert render_attachment(attachment_message("mystery", value=3), RenderContext()) is None
    assert render_attachment(attachment_message("mystery", content=" "), RenderContext()) is None


@pytest.fixture
def shout() -> Iterator[None]:
    def render(message: AttachmentMessage, context: RenderContext) -> RenderedAttachment | None:
        return RenderedAttachment.reminder(str(message.attachment.data["word"]).upper())

    register_attachment_renderer("shout", render)
    yield
    unregister_attachment_renderer("shout")


@pytest.mark.usefixtures("shout")
def test_registered_renderer_is_used_by_normalization() -> None:
    out = normalize_messages_for_api(
        [user_message("hi"), attachment_message("shout", word="hey")], []
    )
    texts = [b["text"] for m in out for b in m["content"]]
    assert "<system-reminder>\nHEY\n</system-reminder>" in texts


def test_register_rejects_empty_type_and_pairs_must_match() -> None:
    with pytest.raises(ValueError):
        register_attachment_renderer("", lambda m, c: None)
    with pytest.raises(ValueError, match="does not match"):
        RenderedAttachment.tool_call(
            ToolUseBlock(id="a", name="Read"), ToolResultBlock(tool_use_id="b")
        )


def test_truncated_directory_says_so() -> None:
    out = render_attachment(
        attachment_message("directory", path="/s", listing="a", truncated=True), RenderContext()
    )
    assert (
        out is not None
        and out.text is not None
        and out.text.endswith("a\n[Listing truncated.]\n</system-reminder>")
    )
