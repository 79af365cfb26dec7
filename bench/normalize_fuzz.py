"""Fuzz count: how many generated histories normalize into a request the API would reject.

Draws histories from the property tests' strategies (tests/messages: arbitrary internal
arrays, messy sessions, sessions that end inside an unfinished tool loop, and last turns
that combine their edges: split responses with attachments or empty text between the
parts, dropped thinking, interrupted and orphaned calls), normalizes
each for one thinking mode and counts the requests that break a rule:

* `validator`: any error `validate_api_request` reports;
* `loop`: extended thinking only, the assistant message that opens the unfinished tool loop
  does not start with thinking, under either reading of where the loop starts (after the
  last user message with any non-tool_result block, or with any block before the tool
  results) — checked here on its own so the script also measures trees whose validator
  knows only one reading;
* `partial`: a response's thinking reaches the API only in part (the API rejects a
  partially dropped sequence); counted on the session-shaped histories.

The property tests run a few hundred examples each; this runs tens of thousands.

    python bench/normalize_fuzz.py [--histories 2000] [--thinking enabled|adaptive]

The figures in docs/benchmarks.md come from `--histories 30000` (enabled) and
`--histories 100000 --thinking adaptive`, the counts issue 25 reported.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "messages"))

from msg_strategies import TOOLS, internal_arrays
from session_strategies import edge_turns, from_last_boundary, last_turns, sessions

from queryloop.messages import (
    AssistantMessage,
    Message,
    ThinkingBlock,
    ThinkingType,
    normalize_messages_for_api,
    validate_api_request,
)

CONFIGS: dict[ThinkingType, dict[str, Any]] = {
    ThinkingType.ENABLED: {"type": "enabled", "budget_tokens": 1024},
    ThinkingType.ADAPTIVE: {"type": "adaptive"},
}
THINKING = ("thinking", "redacted_thinking")


def histories() -> st.SearchStrategy[tuple[bool, list[Message]]]:
    """(session-shaped?, a history) from the four strategies, in equal parts. Only the
    session-shaped ones give every response its own thinking texts, which the `partial`
    count needs (arbitrary arrays reuse them)."""
    return st.one_of(
        internal_arrays().map(lambda h: (False, h)),
        sessions().map(lambda case: (True, from_last_boundary(case[1]))),
        last_turns().map(lambda h: (True, from_last_boundary(h))),
        edge_turns().map(lambda h: (True, from_last_boundary(h))),
    )


def _loop_starts(out: list[dict[str, Any]]) -> list[int]:
    """The loop's first assistant message under both readings (none when no loop is open)."""
    starts = []
    for continues in (_results_only, _results_led):
        j, first = len(out) - 1, None
        while j >= 1 and continues(out[j]) and out[j - 1]["role"] == "assistant":
            first, j = j - 1, j - 2
        if first is not None:
            starts.append(first)
    return starts


def _results_only(message: dict[str, Any]) -> bool:
    content = message["content"]
    return message["role"] == "user" and all(b["type"] == "tool_result" for b in content)


def _results_led(message: dict[str, Any]) -> bool:
    return bool(message["role"] == "user" and message["content"][0]["type"] == "tool_result")


def _partial(history: list[Message], out: list[dict[str, Any]]) -> bool:
    by_response: dict[str, set[tuple[str, str]]] = collections.defaultdict(set)
    for message in history:
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ThinkingBlock):
                    key = message.message_id or message.uuid
                    by_response[key].add((block.thinking, block.signature))
    sent = {b["thinking"] for m in out for b in m["content"] if b["type"] == "thinking"}
    for blocks in by_response.values():
        texts = {text for text, _ in blocks}
        if texts & sent and (not texts <= sent or not all(sig for _, sig in blocks)):
            return True
    return False


def check(
    history: list[Message], sessionlike: bool, mode: ThinkingType, counts: collections.Counter[str]
) -> None:
    out: list[dict[str, Any]] = normalize_messages_for_api(history, TOOLS, thinking=mode)  # type: ignore[assignment]
    counts["histories"] += 1
    if not out:
        return
    body = {"model": "m", "max_tokens": 2048, "messages": out, "tools": TOOLS}
    body["thinking"] = CONFIGS[mode]
    rejected = False
    if any(v.is_error for v in validate_api_request(body)):
        counts["validator"] += 1
        rejected = True
    if mode is ThinkingType.ENABLED and any(
        out[s]["content"][0]["type"] not in THINKING for s in _loop_starts(out)
    ):
        counts["loop"] += 1
        rejected = True
    if sessionlike and _partial(history, out):
        counts["partial"] += 1
        rejected = True
    counts["rejected"] += rejected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=2_000)
    parser.add_argument("--thinking", choices=["enabled", "adaptive"], default="enabled")
    args = parser.parse_args()
    mode = ThinkingType(args.thinking)
    counts: collections.Counter[str] = collections.Counter()

    @settings(
        max_examples=args.histories,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(histories())
    def run(case: tuple[bool, list[Message]]) -> None:
        check(case[1], case[0], mode, counts)

    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    print(
        f"thinking={mode.value} histories={counts['histories']} "
        f"rejected={counts['rejected']} (validator={counts['validator']} "
        f"loop={counts['loop']} partial={counts['partial']}) in {seconds:.0f} s"
    )


if __name__ == "__main__":
    main()
