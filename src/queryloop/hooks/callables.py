"""Running one Python-callable hook (sync or async); failures become a `HookRun`, not a crash."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping
from typing import Any

from .config import CallableHook
from .shell import HookRun


async def run_callable_hook(hook: CallableHook, payload: Mapping[str, Any]) -> HookRun:
    """Call a Python hook (sync or async) with a copy of the event dict.

    Async hooks get `hook.timeout`; a sync hook runs inline, so it must return quickly.
    """
    try:
        result = hook.fn(dict(payload))
        if inspect.isawaitable(result):
            result = await asyncio.wait_for(_await(result), hook.timeout)
    except TimeoutError:
        return HookRun(hook.label, None, error=f"timed out after {hook.timeout:g}s")
    except Exception as exc:
        return HookRun(hook.label, None, error=f"raised {type(exc).__name__}: {exc}")
    if result is not None and not isinstance(result, Mapping):
        return HookRun(hook.label, None, error=f"returned {type(result).__name__}, expected a dict")
    return HookRun(hook.label, 0, output=result)


async def _await(value: Any) -> Any:
    return await value
