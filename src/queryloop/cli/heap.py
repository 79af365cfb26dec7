"""The collector during start-up: paused until the session has started, then the heap frozen.

Start-up builds objects that live as long as the process: the model SDK's thousands of pydantic
classes, our modules, their dataclasses. While they are built, Python's cyclic collector keeps
walking them: every full collection scans the whole heap, finds nothing to free (start-up makes
almost no cyclic garbage) and took 0.2-0.3 s each, two or three times before `-p`'s first
request (gc callbacks on a loaded 2-core machine; 0.33 s of CPU in all, a fifth of the run).
So the console script pauses the collector (`pause_collections`) and, once the session has
started, moves everything alive into the permanent generation, which later collections skip,
and turns the collector back on (`settle`). Reference counting frees everything else as usual.
The price: the few cycles start-up drops before `settle` are frozen with the rest and stay
until exit (a few hundred objects in a `-p` run, by the collector's own counts).

Only the console script pauses it (it owns the process): `main()` called inside another program
(the tests, an embedding) leaves that program's collector alone. Python's documentation gives
`gc.freeze` for the same reason: objects made once and kept should not be scanned again.
"""

from __future__ import annotations

import gc

_paused = False
"""Whether `pause_collections` turned the collector off and `settle` has not turned it on."""


def pause_collections() -> None:
    """No cyclic collections until `settle` (called by the console script before start-up)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def settle() -> None:
    """Start-up is done: freeze what it built and collect as usual from now on. A no-op
    unless `pause_collections` paused the collector."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
