"""Writing the files a test sets up (shared by every test folder, as `agent_support`)."""

from __future__ import annotations

import json
from pathlib import Path


def write_text(path: Path, content: str) -> Path:
    """`content` at `path`, its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    return path


def write_json(path: Path, data: object) -> Path:
    """`data` as indented JSON at `path` (a string is written as it is: a broken file)."""
    text = data if isinstance(data, str) else json.dumps(data, indent=2) + "\n"
    return write_text(path, text)
