"""Running one `http` hook: POST the event JSON, read the response body as its output.

Claude Code's contract (https://code.claude.com/docs/en/hooks, "HTTP response handling"): a
2xx with an empty body is success without output; a 2xx with a JSON object is parsed like a
command hook's stdout; any other body, a non-2xx status, a connection failure or a timeout is
a non-blocking error (an http hook cannot block through its status code). Header values may
name environment variables as `$VAR` or `${VAR}`; only names in `allowedEnvVars` are
resolved, any other becomes empty, so a settings file cannot read secrets it did not list.
The settings' `allowedHttpHookUrls` and `httpHookAllowedEnvVars` narrow both further
(`config.hook_policy`, which sets `HttpHook.refused` and shortens `allowed_env_vars`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .config import HttpHook
from .shell import HookRun

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def interpolate(value: str, env: Mapping[str, str], allowed: tuple[str, ...]) -> str:
    """`$VAR` / `${VAR}` replaced by the variable when it is allowed, else by nothing."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return env.get(name, "") if name in allowed else ""

    return _VAR.sub(one, value)


async def run_http_hook(
    hook: HttpHook, payload: Mapping[str, Any], *, env: Mapping[str, str], timeout: float
) -> HookRun:
    """POST `payload` to the hook's URL; the body becomes the run's stdout. A hook a
    settings policy refuses (`HttpHook.refused`) is not called: a non-blocking error."""
    if hook.refused is not None:
        return HookRun(hook.label, None, error=hook.refused)
    headers = {k: interpolate(v, env, hook.allowed_env_vars) for k, v in hook.headers.items()}
    headers["Content-Type"] = "application/json"
    body = json.dumps(payload, default=str)
    # Imported here, not with the module: httpx loads its command line (click, rich,
    # pygments) with it, and a session without an http hook never needs any of them.
    import httpx

    try:
        async with httpx.AsyncClient(timeout=timeout) as client:
            response = await client.post(hook.url, content=body, headers=headers)
    except httpx.TimeoutException:
        return HookRun(hook.label, None, error=f"timed out after {timeout:g}s")
    except httpx.HTTPError as exc:
        return HookRun(hook.label, None, error=f"request failed: {type(exc).__name__}: {exc}")
    text = response.text
    if not 200 <= response.status_code < 300:
        return HookRun(
            hook.label, None, error=f"answered HTTP {response.status_code}: {text[:300]}"
        )
    if text.strip() and not text.lstrip().startswith("{"):
        return HookRun(hook.label, None, error=f"answered a body that is not JSON: {text[:200]!r}")
    return HookRun(hook.label, 0, stdout=text)
