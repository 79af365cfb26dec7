"""`list_sessions`: id, time, first prompt, prompts, cost."""

from __future__ import annotations

import os
from pathlib import Path

from queryloop.messages import meta_user_message, tool_result_message, user_message
from queryloop.messages.usage import Usage
from queryloop.session import Transcript, list_sessions, session_path


def test_list_sessions_newest_first_with_first_prompt_turns_and_cost(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path
    a, b = session_path("a", cwd, home), session_path("b", cwd, home)
    with Transcript(a) as w:
        w.append(meta_user_message("<system-reminder>env</system-reminder>"))
        w.append(user_message("first\nprompt"))
        w.append(tool_result_message("t", "out"))
        w.append(user_message("second"))
        w.append_usage(Usage(input_tokens=1), cost_usd=0.5)
        w.append_usage(Usage(input_tokens=1), cost_usd=0.25)
    with Transcript(b) as w:
        w.append(user_message("other"))
    os.utime(a, (2_000_000_000, 2_000_000_000))
    os.utime(b, (1_000_000_000, 1_000_000_000))
    sessions = list_sessions(cwd, home)
    assert [s.id for s in sessions] == ["a", "b"]
    assert sessions[0].first_prompt == "first prompt"
    assert sessions[0].turns == 2 and sessions[0].cost_usd == 0.75
    assert sessions[0].prompts == 2  # legacy transcript: no result records
    assert sessions[0].modified > sessions[1].modified
    assert list_sessions(tmp_path / "elsewhere", home) == []
