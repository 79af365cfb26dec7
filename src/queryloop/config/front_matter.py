"""YAML front matter of Markdown instruction files (skills, commands, Claude Code's rules).

A file may start with a `---` line, YAML, and another `---` line; the rest is the body the
model sees. PyYAML reads the YAML (YAML 1.1, as Claude Code's files are written), so
quoting, lists and comments follow the spec rather than a hand-written reader. A parse error
carries the line of the file it is on, so a warning can name `file:line`.

Claude Code reads front matter more leniently than YAML: when the YAML does not parse, it
quotes the values that broke it and tries again (its 2.1.69 changelog: "Fixed skill
descriptions with colons (e.g., "Triggers include: X, Y, Z") failing to load";
anthropics/claude-code#16916 for agent files). So does queryloop, line by line: a top-level
`key: value` line that YAML refuses on its own (`description: Use this agent when: the user
asks`, `argument-hint: [a] [b]`, `paths: **/*.ts`) is read with the rest of the line as its
text value; every other line keeps its YAML meaning. What still does not parse is an error.
"""

from __future__ import annotations

import json
import re
from typing import Any

_KEY_LINE = re.compile(r"^(?P<key>[A-Za-z0-9_-]+):[ \t]+(?P<value>\S.*?)[ \t]*$")
"""A top-level `key: value` line (not indented, not a list item, a value on the line)."""
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
    """YAML, and Claude Code's leniency, tried only when the YAML does not parse: each
    top-level `key: value` line YAML refuses on its own is read with the rest of the line as
    its text (a description with `: ` in it; `argument-hint: [a] [b]`, as Claude Code's own
    command docs write it), and a list item that starts with `*` (`- *.md`) as that glob
    (Claude Code loads it: anthropics/claude-code#17204). Still no YAML: the first error."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as first:
        quoted = "\n".join(_as_text_if_refused(line) for line in text.split("\n"))
        quoted = _STAR_VALUE.sub(lambda m: m.group(1) + json.dumps(m.group(2)), quoted)
        if quoted == text:
            raise
        try:
            return yaml.safe_load(quoted)
        except yaml.YAMLError:
            raise first from None


def _as_text_if_refused(line: str) -> str:
    """`line` as it is, or, when it is a `key: value` line YAML refuses on its own, with
    its value quoted (so it reads as the text written)."""
    import yaml

    match = _KEY_LINE.match(line)
    if match is None:
        return line
    try:
        yaml.safe_load(line)
    except yaml.YAMLError:
        return f"{match['key']}: {json.dumps(match['value'], ensure_ascii=False)}"
    return line
