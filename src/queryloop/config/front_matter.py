"""YAML front matter of Markdown instruction files (skills, commands, Claude Code's rules).

A file may start with a `---` line, YAML, and another `---` line; the rest is the body the
model sees. PyYAML reads the YAML (YAML 1.1, as Claude Code's files are written), so
quoting, lists and comments follow the spec rather than a hand-written reader. A parse error
carries the line of the file it is on, so a warning can name `file:line`.
"""

from __future__ import annotations

import json
import re
from typing import Any

_HINT_LINE = re.compile(r"^(argument-hint:[ \t]*)(\[.*?)[ \t]*$", re.M)
_STAR_VALUE = re.compile(r"^([ \t]*(?:-[ \t]+|[A-Za-z0-9_-]+:[ \t]+))(\*[^\n]*?)[ \t]*$", re.M)
"""A value or list item that starts with `*` (`paths: **/*.ts`, `- *.md`): YAML reads an
alias there and fails; what the writer meant is a glob."""
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(?P<yaml>.*?)^---[ \t]*\r?$\n?", re.S | re.M)
_FIRST_YAML_LINE = 2
"""The front matter's YAML starts on the file's second line (after `---`)."""


class FrontMatterError(ValueError):
    """Front matter that is not a YAML mapping; `line` is the file's line (1-based)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(front matter as a dict, body). No front matter: ({}, text). Bad YAML, or YAML that is
    not a mapping: `FrontMatterError` (a ValueError) with the line it is on."""
    import yaml

    match = _FRONT_MATTER.match(text.lstrip("\ufeff"))
    if match is None:
        return {}, text
    try:
        data = _safe_load(match.group("yaml"))
    except yaml.YAMLError as exc:
        raise _error(exc) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontMatterError(
            "the front matter must be a YAML mapping (name: ..., description: ...)",
            _FIRST_YAML_LINE,
        )
    return data, text[match.end() :]


def _error(exc: Exception) -> FrontMatterError:
    """The parser's complaint with the file's line: where the construct it was reading
    starts (the `paths: [` of an unclosed list), else where it gave up."""
    mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
    parts = [getattr(exc, "context", None), getattr(exc, "problem", None)]
    said = "; ".join(str(p) for p in parts if p) or str(exc)
    return FrontMatterError(
        f"invalid YAML front matter: {said}", _FIRST_YAML_LINE + (mark.line if mark else 0)
    )


def key_line(text: str, key: str) -> int:
    """The file line (1-based) of `key:` in the front matter of `text` (the front matter's
    first line if it is not there), from the YAML parser's own marks."""
    import yaml

    match = _FRONT_MATTER.match(text.lstrip("\ufeff"))
    if match is None:
        return 1
    try:
        node = yaml.compose(match.group("yaml"))
    except yaml.YAMLError:
        return _FIRST_YAML_LINE
    if isinstance(node, yaml.MappingNode):
        for name, _value in node.value:
            if name.value == key:
                return _FIRST_YAML_LINE + int(name.start_mark.line)
    return _FIRST_YAML_LINE


def _safe_load(text: str) -> Any:
    """YAML, and two leniencies Claude Code's users rely on, tried only when the YAML does not
    parse: `argument-hint: [a] [b]` (its own command docs write it so) is read as the text it
    shows, and an unquoted glob that starts with `*` (`paths: **/*.ts`, which Claude Code
    loads: anthropics/claude-code#17204) as that glob."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        quoted = _HINT_LINE.sub(lambda m: m.group(1) + json.dumps(m.group(2)), text)
        quoted = _STAR_VALUE.sub(lambda m: m.group(1) + json.dumps(m.group(2)), quoted)
        if quoted == text:
            raise
        return yaml.safe_load(quoted)
