"""Tasks in, results out: the JSONL files of a batch and the records they hold.

A tasks file has one JSON object per line:

    {"id": "fix-1", "prompt": "Fix the failing test", "cwd": "work/fix-1",
     "copy_from": "templates/repo", "options": {"max_turns": 30, "model": "..."}}

`id` and `prompt` are required; `cwd` (relative to the tasks file) is the task's working
folder, created when missing, and `copy_from` a folder copied into it before the task first
runs; `options` are `Agent` options for this task (over the batch's); `session_id` or
`resume` name the session to use. A results file gets one `BatchResult.to_dict()` line per
finished task, appended as each task ends.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import ConfigError

_TASK_FIELDS = frozenset({"id", "prompt", "cwd", "copy_from", "options", "resume", "session_id"})


@dataclass(frozen=True)
class BatchTask:
    """One session to run: a prompt, its working folder, and Agent options over the batch's."""

    id: str
    prompt: str
    options: Mapping[str, Any] = field(default_factory=dict)
    resume: str | None = None
    """A session id to continue instead of starting a new session."""
    cwd: str | None = None
    """The task's working folder (created when missing); None: the batch's `cwd` option."""
    copy_from: str | None = None
    """A folder whose contents are copied into `cwd` before the task first runs."""
    session_id: str | None = None
    """The session this task runs in. Set by the runners before dispatch when None, so a
    retried task (a worker died) resumes the same session instead of starting over."""

    @property
    def session(self) -> str | None:
        """The session to run in: `resume` if given, else `session_id`."""
        return self.resume or self.session_id

    def with_session(self, namespace: str) -> BatchTask:
        """This task with a session id: its own, or one derived from `namespace` and its id
        (the same batch run again finds the same sessions)."""
        if self.session is not None:
            return self
        derived = uuid.uuid5(uuid.NAMESPACE_URL, f"queryloop-batch:{namespace}:{self.id}")
        return replace(self, session_id=str(derived))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, base: Path | None = None) -> BatchTask:
        """A task from one tasks-file object; relative folders are taken from `base`."""
        unknown = sorted(set(data) - _TASK_FIELDS)
        if unknown:
            raise ConfigError(f"unknown task field(s) {', '.join(unknown)}")
        task_id, prompt = data.get("id"), data.get("prompt")
        if not isinstance(task_id, str | int) or not str(task_id):
            raise ConfigError("a task needs an `id` (a string)")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ConfigError(f"task {task_id!r} needs a `prompt` (a non-empty string)")
        options = data.get("options") or {}
        if not isinstance(options, Mapping):
            raise ConfigError(f"task {task_id!r}: `options` must be an object")
        return cls(
            id=str(task_id),
            prompt=prompt,
            options=dict(options),
            resume=data.get("resume"),
            cwd=_folder(data.get("cwd"), base),
            copy_from=_folder(data.get("copy_from"), base),
            session_id=data.get("session_id"),
        )


def _folder(value: Any, base: Path | None) -> str | None:
    if value is None:
        return None
    path = Path(str(value)).expanduser()
    if not path.is_absolute() and base is not None:
        path = base / path
    return str(path)


@dataclass(frozen=True)
class BatchResult:
    """How one task ended. `error` is set when the task raised instead of ending normally."""

    task_id: str
    terminal: str
    text: str = ""
    session_id: str = ""
    turns: int = 0
    cost_usd: float = 0.0
    usage: Mapping[str, int] = field(default_factory=dict)
    duration_s: float = 0.0
    error: str | None = None
    attempts: int = 1
    """How many times the task was started (a resumed task counts each start)."""

    @property
    def failed(self) -> bool:
        """True when the task raised or its loop did not complete."""
        return self.error is not None or self.terminal != "completed"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (one line of a results file)."""
        data = asdict(self)
        data["usage"] = dict(self.usage)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BatchResult:
        """Read back one results-file line."""
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in names})


def read_tasks(path: Path | str) -> list[BatchTask]:
    """Every task of a tasks file, in order; a clear error names the bad line."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"no tasks file at {path}")
    tasks: list[BatchTask] = []
    seen: set[str] = set()
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ConfigError("not a JSON object")
            task = BatchTask.from_dict(data, base=path.parent.resolve())
        except (json.JSONDecodeError, ConfigError) as exc:
            raise ConfigError(f"{path}:{lineno}: {exc}") from None
        if task.id in seen:
            raise ConfigError(f"{path}:{lineno}: task id {task.id!r} appears twice")
        seen.add(task.id)
        tasks.append(task)
    return tasks


def read_results(path: Path | str) -> dict[str, BatchResult]:
    """The results already in a results file, by task id (a cut last line is ignored)."""
    path = Path(path)
    if not path.is_file():
        return {}
    results: dict[str, BatchResult] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and isinstance(data.get("task_id"), str):
            results[data["task_id"]] = BatchResult.from_dict(data)
    return results


class ResultsFile:
    """Appends one result per line, flushed as each task ends."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, result: BatchResult) -> None:
        """Write `result` as one line now (after a line a kill cut short, on a new line)."""
        line = json.dumps(result.to_dict(), ensure_ascii=False, default=str) + "\n"
        if _ends_mid_line(self.path):
            line = "\n" + line
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)

    def extend(self, results: Iterable[BatchResult]) -> None:
        """Append several results."""
        for result in results:
            self.append(result)


def _ends_mid_line(path: Path) -> bool:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return False
    if size == 0:
        return False
    with path.open("rb") as handle:
        handle.seek(size - 1)
        return handle.read(1) != b"\n"
