"""What a child `queryloop` does during start-up, for tests/cli/test_cli_startup.py.

A child gets this folder on PYTHONPATH, so Python loads this module at start-up. With
$STARTUP_WATCH_STAMPS set, every pass of the cyclic collector is appended to that file as
`gen<N> <time.monotonic()>` (the clock the local Messages API server stamps request arrivals
with, so a test can tell which passes ran before the first request), and at exit one line
`modules <name> ...` lists which of the modules named in $STARTUP_WATCH_MODULES were imported
and `collector on|off` whether the collector is on.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import time
from typing import Any

STAMPS = os.environ.get("STARTUP_WATCH_STAMPS")
MODULES = os.environ.get("STARTUP_WATCH_MODULES", "").split()


def _write(line: str) -> None:
    if STAMPS:
        with open(STAMPS, "a", encoding="utf-8") as file:
            file.write(line + "\n")


def _collected(phase: str, info: dict[str, Any]) -> None:
    if phase == "stop":
        _write(f"gen{info['generation']} {time.monotonic()}")


def _at_exit() -> None:
    _write(" ".join(["modules", *(name for name in MODULES if name in sys.modules)]))
    _write(f"collector {'on' if gc.isenabled() else 'off'}")


if STAMPS:
    gc.callbacks.append(_collected)
    atexit.register(_at_exit)
