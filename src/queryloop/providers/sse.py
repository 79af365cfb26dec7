"""The Messages API's streaming payloads that queryloop writes as well as reads: the local
test server sends them (`queryloop.testing`) and the Claude Agent SDK shim hands them on as
`StreamEvent`s (`claude_agent_sdk.convert`); `assembler` reads them from the API.

Shapes: https://docs.anthropic.com/en/docs/build-with-claude/streaming ("Event types").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def message_start(message_id: str, model: str, usage: Mapping[str, Any]) -> dict[str, Any]:
    """The `message_start` event: the message with empty content and no stop reason yet."""
    return {
        "type": "message_start",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": dict(usage),
        },
    }
