"""What a request may carry on each model: prefill, mid-conversation system messages, and
the thinking a model runs when the request sets none. docs/providers.md cites each source.

The table (`RULES`) covers the models `models.MODELS` lists. A Claude model it does not list
(a newer release, Claude Mythos Preview) follows its family and version (`infer_rules`):
"Prefilling is not supported on Claude 4.6 and later models and Claude Mythos Preview"
(Using the Messages API), and the newest models think by default ("on the newest it is on
by default", Troubleshooting thinking). `canonical_id` reads the spellings of the cloud
platforms (Bedrock's `[region.]anthropic.<id>[-v1][:0]`, Vertex's `<id>@<date>`) and dotted
versions (`anthropic/claude-opus-4.6`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..messages.thinking_mode import ThinkingType


@dataclass(frozen=True, slots=True)
class RequestRules:
    """What one model accepts in a request (the fields `ModelInfo` carries)."""

    prefill: bool = True
    mid_conversation_system: bool | None = None
    default_thinking: ThinkingType = ThinkingType.DISABLED


_ON = ThinkingType.ADAPTIVE
_OFF = ThinkingType.DISABLED

# Troubleshooting thinking, "Thinking support, defaults, and rejected configurations by
# model" (Default: "Always on" for Fable and Mythos, "On" for Opus 5 and Sonnet 5, "Off" for
# Opus 4.8 and earlier); Sonnet 5.5: "a request with no `thinking` field runs with adaptive
# thinking"; Opus 5.5: thinking cannot be turned off. Haiku 5.5's pages say nothing we found:
# it is taken as on, like every 5.x model, which is also the safe side (signed thinking is
# kept, and no prefill is sent).
# Mid-conversation system messages: "This feature is available on Claude Fable 5.1, Claude
# Mythos 5.1, Claude Fable 5, Claude Mythos 5, Claude Opus 4.8, and Claude Opus 5 ... not
# available on Claude Sonnet 5" (its page), Opus 5.5 added since; a model not listed does
# not take them (Sonnet 5.5 and Haiku 5.5 included).
RULES: dict[str, RequestRules] = {
    "claude-fable-5-1": RequestRules(False, True, _ON),
    "claude-fable-5": RequestRules(False, True, _ON),
    "claude-mythos-5-1": RequestRules(False, True, _ON),
    "claude-mythos-5": RequestRules(False, True, _ON),
    "claude-opus-5-5": RequestRules(False, True, _ON),
    "claude-opus-5": RequestRules(False, True, _ON),
    "claude-sonnet-5-5": RequestRules(False, False, _ON),
    "claude-sonnet-5": RequestRules(False, False, _ON),
    "claude-haiku-5-5": RequestRules(False, False, _ON),
    "claude-opus-4-8": RequestRules(False, True, _OFF),
    "claude-opus-4-7": RequestRules(False, False, _OFF),
    "claude-opus-4-6": RequestRules(False, False, _OFF),
    "claude-sonnet-4-6": RequestRules(False, False, _OFF),
}
"""Models whose rules differ from the old default (prefill, no system messages, no thinking)."""

OLD_MODEL = RequestRules(True, False, _OFF)
"""A listed model before Claude 4.6: prefill, no system messages, thinking only when asked."""

_FAMILIES = "opus|sonnet|haiku|fable|mythos"
# "claude-sonnet-4-6", "claude-fable-5", "claude-3-7-sonnet": a version is one or two
# numbers of at most two digits each (a longer number is a date).
_VERSIONED = re.compile(
    rf"^claude-(?:(?P<family>{_FAMILIES})-(?P<major>\d{{1,2}})(?:-(?P<minor>\d{{1,2}}))?"
    rf"|(?P<major2>\d{{1,2}})(?:-(?P<minor2>\d{{1,2}}))?-(?P<family2>{_FAMILIES}))(?:-|$)"
)
_ALWAYS_THINKING = ("claude-fable-", "claude-mythos-")
_REGION = re.compile(r"^(?:[a-z]{2,6}(?:-[a-z]+)?\.)?anthropic\.")
_PLATFORM_SUFFIX = re.compile(r"(?:@.*|(?:-v\d+)?(?::\d+)?)$")


def canonical_id(name: str) -> str:
    """`name` lower-cased, without provider prefixes, `[1m]` and cloud-platform suffixes."""
    key = name.strip().lower()
    for prefix in ("anthropic/", "anthropic:"):
        key = key.removeprefix(prefix)
    key = _REGION.sub("", key)
    key = key.split("[", 1)[0]
    # OpenRouter-style dotted versions: "claude-opus-4.6" is "claude-opus-4-6".
    return _PLATFORM_SUFFIX.sub("", key).replace(".", "-")


def rules_of(key: str) -> RequestRules:
    """The rules of a model the table lists (`key` is a `models.MODELS` key)."""
    return RULES.get(key, OLD_MODEL)


def infer_rules(key: str) -> RequestRules | None:
    """The rules of an unlisted Claude model, from its family and version; None when `key`
    is not a Claude model id. Whether it takes system messages stays unknown (None)."""
    if key.startswith(_ALWAYS_THINKING):
        return RequestRules(prefill=False, default_thinking=_ON)
    match = _VERSIONED.match(key)
    if match is None:
        return None
    major = int(match["major"] or match["major2"])
    minor = int(match["minor"] or match["minor2"] or 0)
    return RequestRules(
        prefill=(major, minor) < (4, 6),
        default_thinking=_ON if major >= 5 else _OFF,
    )
