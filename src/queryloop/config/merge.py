"""Merging settings files, one at a time in precedence order, by walking a table of keys.

A setting is one `SettingKey` in the table (`config.keys.SETTINGS_TABLE`): its JSON key(s),
the `Settings` field(s) it fills, what an untrusted project may do with it (`Untrusted`) and
its rule: a `Value` (a parser and a `Merge`: the last file wins, true in any file holds,
lists concatenate, objects merge key by key) or a rule of its own (`KeyRule`: permissions,
hooks, sandbox, plugins, the MCP approvals and policy, the http hook limits). `SettingsMerger`
walks the table for each file and, at the end, gives each field its value; a top-level key
that is in no entry is a warning (`config.claude_settings` for Claude Code's). Deny always
wins at evaluation (deny, then ask, then allow), whichever file a rule came from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from enum import Enum
from pathlib import Path
from typing import Any

from .claude_settings import CLAUDE_IGNORED, CLAUDE_NOT_APPLICABLE, ignored_keys
from .settings_file import (
    FileContext,
    Journal,
    KeyRule,
    SettingsFile,
    SettingsProblem,
    SettingsScope,
    Severity,
)


class Untrusted(Enum):
    """What an untrusted project's file may do with a key."""

    APPLIES = "applies"
    """Its value counts like anyone's (`model`; switches that only narrow)."""
    NARROWS = "narrows"
    """Only what narrows counts (deny rules, a stricter sandbox, refusals); the key's own rule
    lists the rest in `Settings.ignored`."""
    IGNORED = "ignored"
    """Nothing counts: the value is checked (a bad one is still a problem) and listed in
    `Settings.ignored`."""


class Merge(Enum):
    """How a `Value` key's values from several files combine (lowest precedence first)."""

    LAST = "last"
    """The last file that sets it wins; None when no file does."""
    ANY_TRUE = "any_true"
    """True in any file holds; no later false turns it off."""
    CONCAT = "concat"
    """Lists concatenate, as a tuple."""
    BY_KEY = "by_key"
    """Objects merge key by key, a later file's entry winning."""


def every_file(file: SettingsFile) -> bool:
    """The default `SettingKey.read_from`: the key is read from every file."""
    return True


@dataclass(frozen=True, slots=True)
class Value:
    """A key read and merged by the generic rule: `parse(key, raw)` checks one file's value
    (ValueError with the message when it is wrong; JSON null counts as absent)."""

    parse: Callable[[str, object], Any]
    merge: Merge = Merge.LAST
    bad: Severity = Severity.ERROR
    """How serious a value `parse` refuses is."""
    origin: bool = False
    """Record which file set it in `Settings.origins` (`env`: each `env.NAME`)."""
    describe: Callable[[Any], str | None] | None = None
    """An ignored value as listed in `Settings.ignored` after the key (None: nothing to list);
    by default the value itself."""


@dataclass(frozen=True, slots=True)
class SettingKey:
    """One entry of the table of keys: a setting is declared here and nowhere else."""

    keys: tuple[str, ...]
    """The top-level JSON keys it reads (the first names it)."""
    fields: tuple[str, ...]
    """The `Settings` fields it fills (none for a key accepted and unused, `$schema`)."""
    untrusted: Untrusted
    rule: Value | Callable[[], KeyRule] | None
    """A `Value`, or the factory of a rule of its own; None: accepted, no effect."""
    read_from: Callable[[SettingsFile], bool] = every_file
    """Which files it is read from at all (`trustedFolders`: the user's queryloop file)."""

    def __post_init__(self) -> None:
        if isinstance(self.rule, Value) and self.untrusted is Untrusted.NARROWS:
            raise ValueError(f"{self.name!r}: only a rule of its own knows what narrows")
        if isinstance(self.rule, Value) and (len(self.keys), len(self.fields)) != (1, 1):
            raise ValueError(f"{self.name!r}: a Value reads one key into one field")

    @property
    def name(self) -> str:
        """The key that names the entry."""
        return self.keys[0]

    def start(self) -> KeyRule | None:
        """A fresh rule for one load."""
        if isinstance(self.rule, Value):
            return ValueRule(self, self.rule)
        return self.rule() if self.rule is not None else None


def table_keys(table: Iterable[SettingKey]) -> frozenset[str]:
    """Every top-level key `table` implements."""
    return frozenset(key for entry in table for key in entry.keys)


class ValueRule:
    """The generic rule: one `Value` key's parsed values, combined by its `Merge`."""

    _START: Mapping[Merge, Callable[[], Any]] = {
        Merge.LAST: lambda: None,
        Merge.ANY_TRUE: lambda: False,
        Merge.CONCAT: list,
        Merge.BY_KEY: dict,
    }

    def __init__(self, entry: SettingKey, value: Value) -> None:
        self.entry = entry
        self.value = value
        self.merged: Any = self._START[value.merge]()

    def add(self, data: Mapping[str, Any], ctx: FileContext) -> None:
        """One file's value: checked, then merged or (untrusted) listed as ignored."""
        key = self.entry.name
        raw = data.get(key)
        if raw is None:
            return
        try:
            parsed = self.value.parse(key, raw)
        except ValueError as exc:
            ctx.problem(key, str(exc), self.value.bad)
            return
        if not ctx.trusted and self.entry.untrusted is Untrusted.IGNORED:
            described = self.value.describe(parsed) if self.value.describe else str(parsed)
            if described is not None:
                ctx.ignore(f"{key} {described}")
            return
        self._merge(key, parsed, ctx)

    def _merge(self, key: str, parsed: Any, ctx: FileContext) -> None:
        match self.value.merge:
            case Merge.LAST:
                self.merged = parsed
                if self.value.origin:
                    ctx.origin(key)
            case Merge.ANY_TRUE:
                self.merged = self.merged or bool(parsed)
            case Merge.CONCAT:
                self.merged.extend(parsed)
            case Merge.BY_KEY:
                self.merged.update(parsed)
                for name in parsed if self.value.origin else ():
                    ctx.origin(f"{key}.{name}")

    def result(self) -> object:
        """The merged value (a tuple for lists)."""
        return tuple(self.merged) if self.value.merge is Merge.CONCAT else self.merged


class SettingsMerger:
    """Walks `table` over files added in precedence order; `result()` is the keyword
    arguments of the merged `Settings` (`config.settings.load_settings` builds it)."""

    def __init__(self, cwd: Path, table: Iterable[SettingKey]) -> None:
        self.cwd = cwd
        self.table = tuple(table)
        self.journal = Journal()
        self._rules = [(entry, entry.start()) for entry in self.table]
        self._accepted = table_keys(self.table) | CLAUDE_NOT_APPLICABLE
        self._told: set[str] = set()

    def add(self, file: SettingsFile, *, trusted: bool) -> None:
        """One file's settings; `trusted` False for an untrusted project's own files."""
        self.journal.files.append(file)
        project = file.scope in (SettingsScope.PROJECT, SettingsScope.LOCAL)
        root = self.cwd if project else file.path.parent
        ctx = FileContext(file, trusted=trusted, root=root, journal=self.journal)
        self._unknown_keys(ctx)
        for entry, rule in self._rules:
            if rule is not None and entry.read_from(file):
                rule.add(file.data, ctx)

    def unreadable(self, problem: SettingsProblem) -> None:
        """A file that could not be read or parsed (it adds nothing else)."""
        self.journal.problems.append(problem)

    def result(self) -> dict[str, Any]:
        """Each field's merged value, with the journal's (files, problems, ignored,
        origins) as tuples and mappings."""
        values: dict[str, Any] = {}
        for entry, rule in self._rules:
            if rule is not None:
                values.update(_fields(entry, rule.result()))
        for name in journal_fields():
            kept = getattr(self.journal, name)
            values[name] = dict(kept) if isinstance(kept, dict) else tuple(kept)
        return values

    def _unknown_keys(self, ctx: FileContext) -> None:
        """Keys neither program knows: one warning each. Claude Code's keys queryloop does not
        use: one warning per file naming them (each key once per load)."""
        unused: list[str] = []
        for key in ctx.file.data:
            if key in self._accepted:
                continue
            if key in CLAUDE_IGNORED:
                if key not in self._told:
                    self._told.add(key)
                    unused.append(key)
                continue
            ctx.problem(key, f"unknown key {key!r} (ignored)", Severity.WARNING)
        if unused:
            ctx.problem(unused[0], ignored_keys(unused), Severity.WARNING)


def _fields(entry: SettingKey, found: object) -> dict[str, Any]:
    """The entry's fields and values: its one field's, or the mapping its rule returned
    (which must name exactly the entry's fields)."""
    if len(entry.fields) == 1:
        return {entry.fields[0]: found}
    if not isinstance(found, Mapping) or set(found) != set(entry.fields):
        raise TypeError(f"the rule of {entry.name!r} did not fill exactly {entry.fields}")
    return dict(found)


def journal_fields() -> tuple[str, ...]:
    """The `Settings` fields the journal fills rather than a key (files, problems, …)."""
    return tuple(f.name for f in fields(Journal))
