"""A setting is declared once (issue 32, item 2): the table of keys (`config.keys`) is the only
declaration, one merger walks it, the settings files are read once, and the settings modules
import each other in one direction only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import grimp
import pytest

from queryloop.config import load_settings
from queryloop.config.claude_settings import CLAUDE_IGNORED, CLAUDE_NOT_APPLICABLE
from queryloop.config.keys import SETTINGS_TABLE, TOP_LEVEL_KEYS
from queryloop.config.merge import (
    Merge,
    SettingKey,
    SettingsMerger,
    Untrusted,
    Value,
    journal_fields,
)
from queryloop.config.settings import Settings
from queryloop.config.settings_file import FileContext, SettingsFile, SettingsScope, Severity


def test_every_settings_field_comes_from_one_entry_of_the_table_or_the_journal() -> None:
    filled = [name for entry in SETTINGS_TABLE for name in entry.fields]
    assert len(filled) == len(set(filled)), "a field filled by two entries"
    assert set(filled).isdisjoint(journal_fields())
    assert set(filled) | set(journal_fields()) == {f.name for f in fields(Settings)}


def test_every_key_is_in_one_entry_and_each_entry_with_a_rule_fills_a_field() -> None:
    keys = [key for entry in SETTINGS_TABLE for key in entry.keys]
    assert len(keys) == len(set(keys)), "a key declared twice"
    assert set(keys) == TOP_LEVEL_KEYS
    assert TOP_LEVEL_KEYS.isdisjoint(CLAUDE_IGNORED | CLAUDE_NOT_APPLICABLE)
    for entry in SETTINGS_TABLE:
        assert bool(entry.fields) == (entry.rule is not None), entry.name


def test_the_merged_settings_have_every_field(tmp_path: Path) -> None:
    """The merger's result is `Settings`' keyword arguments, all of them (no default left)."""
    merger = SettingsMerger(tmp_path, SETTINGS_TABLE)
    assert set(merger.result()) == {f.name for f in fields(Settings)}


# ---- adding a key is one entry: a toy table walked by the same merger ---------------------


def _colour(key: str, raw: object) -> str:
    if raw not in ("red", "green"):
        raise ValueError(f'\'{key}\' must be "red" or "green", not {raw!r}')
    return str(raw)


class _Tally:
    """A rule of its own: counts the `tally` values of trusted files, fills two fields."""

    def __init__(self) -> None:
        self.count = 0
        self.files = 0

    def add(self, data: Mapping[str, Any], ctx: FileContext) -> None:
        if "tally" in data and ctx.trusted:
            self.count += int(data["tally"])
            self.files += 1

    def result(self) -> dict[str, Any]:
        return {"tally": self.count, "tally_files": self.files}


TOY_TABLE = (
    SettingKey(("colour",), ("colour",), Untrusted.IGNORED, Value(_colour, origin=True)),
    SettingKey(("tags",), ("tags",), Untrusted.APPLIES, Value(lambda _k, v: v, Merge.CONCAT)),
    SettingKey(("tally",), ("tally", "tally_files"), Untrusted.NARROWS, _Tally),
)


def _file(tmp_path: Path, scope: SettingsScope, data: dict[str, Any]) -> SettingsFile:
    path = tmp_path / f"{scope.value}.json"
    text = json.dumps(data, indent=2)
    return SettingsFile(scope, path, data, text=text)


def test_a_new_key_is_one_entry_of_the_table(tmp_path: Path) -> None:
    merger = SettingsMerger(tmp_path, TOY_TABLE)
    user = {"colour": "red", "tags": ["a"], "tally": 2}
    project = {"colour": "green", "tags": ["b"], "tally": 5, "model": "x"}
    merger.add(_file(tmp_path, SettingsScope.USER, user), trusted=True)
    merger.add(_file(tmp_path, SettingsScope.PROJECT, project), trusted=False)
    result = merger.result()

    assert result["colour"] == "red"  # an untrusted project's is ignored, and listed
    assert result["tags"] == ("a", "b")  # APPLIES: an untrusted project's counts
    assert (result["tally"], result["tally_files"]) == (2, 1)
    assert result["ignored"] == (f"{tmp_path / 'project.json'}: colour green",)
    assert result["origins"] == {"colour": tmp_path / "user.json"}
    # `model` is not in the toy table: unknown, a warning located in the file's text
    (problem,) = result["problems"]
    assert problem.severity is Severity.WARNING
    assert "unknown key 'model'" in problem.message
    assert (problem.line, problem.column) == (7, 3)


def test_a_bad_value_is_a_problem_located_in_the_text_the_file_was_parsed_from(
    tmp_path: Path,
) -> None:
    merger = SettingsMerger(tmp_path, TOY_TABLE)
    merger.add(_file(tmp_path, SettingsScope.USER, {"tags": [], "colour": "blue"}), trusted=True)
    (problem,) = merger.result()["problems"]
    assert problem.message == "'colour' must be \"red\" or \"green\", not 'blue'"
    assert (problem.line, problem.column, problem.is_error) == (3, 3, True)


def test_a_rule_that_does_not_fill_its_declared_fields_is_refused(tmp_path: Path) -> None:
    table = (SettingKey(("tally",), ("tally", "other"), Untrusted.NARROWS, _Tally),)
    with pytest.raises(TypeError, match="did not fill exactly"):
        SettingsMerger(tmp_path, table).result()


def test_a_value_key_cannot_claim_to_narrow() -> None:
    with pytest.raises(ValueError, match="only a rule of its own"):
        SettingKey(("x",), ("x",), Untrusted.NARROWS, Value(_colour))


# ---- read once; no cycle -----------------------------------------------------------------


def test_each_settings_file_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    settings = project / ".queryloop" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"permissions": {"deny": ["Read(./.env)"], "denyy": []}}')
    reads: list[Path] = []
    read_text = Path.read_text

    def counting(self: Path, *args: Any, **kwargs: Any) -> str:
        reads.append(self)
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counting)
    loaded = load_settings(project, user_home=home, trusted=True, claude_dir=tmp_path / "c")
    assert reads.count(settings) == 1
    (problem,) = loaded.problems  # located from the one read
    assert (problem.line, problem.column) == (1, 44)


def test_no_import_cycle_between_the_config_modules() -> None:
    """Imports inside functions count; TYPE_CHECKING imports do not."""
    graph = grimp.build_graph("queryloop", exclude_type_checking_imports=True)
    config = {m for m in graph.modules if m.startswith("queryloop.config.")}
    cycles = [
        (a, b)
        for a in sorted(config)
        for b in sorted(graph.find_modules_directly_imported_by(a) & config)
        if graph.find_shortest_chain(b, a)
    ]
    assert cycles == []
    assert not graph.find_shortest_chains("queryloop.config.merge", "queryloop.config.settings")
