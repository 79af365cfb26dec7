"""One settings file: where it is, its text and JSON (read once), and what went wrong in it.

The lowest of the settings modules: `config.merge` walks the table of keys (`config.keys`)
over `SettingsFile`s, and each key's rule hears about one file through a `FileContext`, which
locates a problem's key in the same text the JSON was parsed from (JSON has no positions after
parsing) and records it, what an untrusted file asked for and did not get, and which file set
a value. `config.settings` re-exports the public names.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from ..errors import ConfigError
from .discovery import Layout


class SettingsScope(StrEnum):
    """Where a settings file lives."""

    USER = "user"
    PROJECT = "project"
    LOCAL = "local"
    MANAGED = "managed"


class Severity(StrEnum):
    """An error stops the run before any request; a warning is shown and the run goes on."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class SettingsProblem:
    """A settings file that could not be (fully) used; shown to the user as a warning."""

    path: Path
    message: str
    line: int | None = None
    column: int | None = None
    severity: Severity = Severity.ERROR

    @property
    def is_error(self) -> bool:
        """True when the run must not start (see `Severity`)."""
        return self.severity is Severity.ERROR

    def __str__(self) -> str:
        where = str(self.path)
        if self.line is not None:
            where += f":{self.line}:{self.column or 1}"
        return f"{where}: {self.message}"

    def as_error(self) -> ConfigError:
        """The same problem as an exception, for callers that want to fail hard."""
        return ConfigError(str(self))


@dataclass(frozen=True, slots=True)
class SettingsSource:
    """Where a settings file may be: its scope, path and layout."""

    scope: SettingsScope
    path: Path
    layout: Layout = Layout.QUERYLOOP

    @property
    def is_project(self) -> bool:
        """A project's own file (project or local scope): it needs trust to widen anything."""
        return self.scope in (SettingsScope.PROJECT, SettingsScope.LOCAL)


@dataclass(frozen=True, slots=True)
class SettingsFile:
    """One settings file that was read."""

    scope: SettingsScope
    path: Path
    data: Mapping[str, Any]
    layout: Layout = Layout.QUERYLOOP
    text: str = field(default="", repr=False, compare=False)
    """The text `data` was parsed from: where problems are located (the file is read once)."""


def read_settings_text(path: Path) -> tuple[str | None, SettingsProblem | None]:
    """The file's text; None and no problem when absent; None and a problem when unreadable."""
    try:
        return path.read_text(encoding="utf-8"), None
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, SettingsProblem(path, f"cannot read settings file: {reason}", 1, 1)


def parse_settings_text(
    path: Path, text: str
) -> tuple[dict[str, Any] | None, SettingsProblem | None]:
    """The JSON object in `text` (read from `path`); None and a problem when broken."""
    if not text.strip():
        return {}, None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        fix = "fix the JSON syntax (no comments or trailing commas)"
        return None, SettingsProblem(path, f"invalid JSON: {exc.msg}; {fix}", exc.lineno, exc.colno)
    if not isinstance(data, dict):
        return None, SettingsProblem(path, "settings must be a JSON object", 1, 1)
    return data, None


def read_settings_file(path: Path) -> tuple[dict[str, Any] | None, SettingsProblem | None]:
    """The file's JSON object; None and no problem when absent; None and a problem when broken."""
    text, problem = read_settings_text(path)
    if text is None:
        return None, problem
    return parse_settings_text(path, text)


def read_source(source: SettingsSource) -> tuple[SettingsFile | None, SettingsProblem | None]:
    """The file at `source`, read once: its text is kept to locate problems in."""
    text, problem = read_settings_text(source.path)
    if text is None:
        return None, problem
    data, problem = parse_settings_text(source.path, text)
    if data is None:
        return None, problem
    return SettingsFile(source.scope, source.path, data, source.layout, text), None


def locate(text: str, key: str) -> tuple[int, int]:
    """Line and column of the first `"key"` in `text` (JSON has no positions after parsing);
    1:1 when it cannot be found (an escaped spelling)."""
    index = text.find(json.dumps(key))
    if index < 0:
        index = text.find(json.dumps(key, ensure_ascii=False))
    if index < 0:
        return 1, 1
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


@dataclass(slots=True)
class Journal:
    """What a load records beside the values: the files read, their problems, what untrusted
    files asked for and did not get, and which file set `model`, `defaultMode`, `env.NAME`…
    Its fields are `Settings`' fields that no key of the table fills."""

    files: list[SettingsFile] = field(default_factory=list)
    problems: list[SettingsProblem] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    origins: dict[str, Path] = field(default_factory=dict)


class FileContext:
    """One file as a key's rule sees it: whether it is trusted, the folder its relative paths
    start from, and where its problems, ignored values and origins go."""

    def __init__(self, file: SettingsFile, *, trusted: bool, root: Path, journal: Journal):
        self.file = file
        self.trusted = trusted
        self.root = root
        """Relative paths start here: the project for project files, else the file's folder."""
        self._journal = journal

    @property
    def managed(self) -> bool:
        """An administrator's file (managed scope)."""
        return self.file.scope is SettingsScope.MANAGED

    @property
    def project(self) -> bool:
        """A project's own file (project or local scope)."""
        return self.file.scope in (SettingsScope.PROJECT, SettingsScope.LOCAL)

    def problem(self, key: str, message: str, severity: Severity = Severity.ERROR) -> None:
        """Records a problem, located at the first `"key"` of the file."""
        line, column = locate(self.file.text, key)
        self._journal.problems.append(
            SettingsProblem(self.file.path, message, line, column, severity)
        )

    def flag(self, key: str, message: str, is_error: bool) -> None:
        """`problem` in the (key, message, is_error) form the sandbox and policy keys use."""
        self.problem(key, message, Severity.ERROR if is_error else Severity.WARNING)

    def ignore(self, text: str) -> None:
        """Records what this (untrusted) file asked for and did not get."""
        self._journal.ignored.append(f"{self.file.path}: {text}")

    def origin(self, name: str) -> None:
        """Records that this file set `name` (for `Settings.origins`)."""
        self._journal.origins[name] = self.file.path

    def boolean(self, data: Mapping[str, Any], key: str) -> bool | None:
        """`data[key]` as true or false; None when absent (or wrong: a problem)."""
        value = data.get(key)
        if value is None or isinstance(value, bool):
            return value
        self.problem(key, f"'{key}' must be true or false")
        return None

    def strings(self, data: Mapping[str, Any], key: str) -> list[str]:
        """`data[key]` as a list of strings; empty when absent (or wrong: a problem)."""
        value = data.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.problem(key, f"'{key}' must be a list of strings")
            return []
        return list(value)

    def managed_switch(self, data: Mapping[str, Any], key: str) -> bool:
        """A switch only an administrator may turn on: true in a managed file; elsewhere a
        warning that it is ignored."""
        value = self.boolean(data, key)
        if value and not self.managed:
            message = f"'{key}' is honoured in managed settings only (ignored here)"
            self.problem(key, message, Severity.WARNING)
            return False
        return bool(value)


class KeyRule(Protocol):
    """How one entry of the table of keys reads each file and what it adds up to; a fresh
    one per load. `result()` is the value of the entry's one `Settings` field, or a mapping
    of field to value when the entry fills several."""

    def add(self, data: Mapping[str, Any], ctx: FileContext) -> None:
        """One file's data (the whole object: a rule reads its own keys)."""
        ...

    def result(self) -> object:
        """The merged value(s) of every file added."""
        ...
