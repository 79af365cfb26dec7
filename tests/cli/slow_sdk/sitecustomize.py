"""A slow `anthropic` import, for the start-up tests (tests/cli/test_cli_startup.py).

A child `queryloop` gets this folder on PYTHONPATH, so Python loads this module at start-up.
The `anthropic` package then takes $SLOW_SDK_DELAY seconds longer to import (a sleep in its
loader, holding only that module's import lock, as a slow import does), and the moment it
finished is appended to $SLOW_SDK_STAMPS as `sdk-imported <time.monotonic()>`. The tests
compare that moment with what else happened meanwhile (an MCP server's handshake, the prompt).
$SLOW_SDK_MODULE names another module to slow the same way (`queryloop.agent`: is the prompt
drawn before the Agent's import?).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import time
from collections.abc import Sequence
from types import ModuleType
from typing import Any

DELAY = float(os.environ.get("SLOW_SDK_DELAY", "0"))
STAMPS = os.environ.get("SLOW_SDK_STAMPS")
MODULE = os.environ.get("SLOW_SDK_MODULE", "anthropic")


class _SlowLoader(importlib.abc.Loader):
    def __init__(self, real: Any) -> None:
        self.real = real

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.real.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        time.sleep(DELAY)
        self.real.exec_module(module)
        if STAMPS:
            with open(STAMPS, "a", encoding="utf-8") as file:
                file.write(f"sdk-imported {time.monotonic()}\n")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class _SlowFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _SlowLoader(spec.loader)
        return spec


if DELAY or STAMPS:
    sys.meta_path.insert(0, _SlowFinder())
