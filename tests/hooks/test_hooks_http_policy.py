"""The settings' limits on `http` hooks (issue 22, item 1): `allowedHttpHookUrls` (a hook
whose URL no pattern matches is not called, and the user is told) and
`httpHookAllowedEnvVars` (a header reads a variable only when both it and the hook's own
`allowedEnvVars` name it). Real settings files, a real HTTP endpoint on 127.0.0.1 and an
agent on the local Messages API server."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from file_support import write_json as write
from queryloop import Agent
from queryloop.config import load_workspace
from queryloop.hooks import HookMatcher, HttpHook
from queryloop.testing import MessagesServer, text, turn

Calls = list[tuple[str, dict[str, str]]]


pytestmark = pytest.mark.usefixtures("api_key")


class _Endpoint(BaseHTTPRequestHandler):
    calls: ClassVar[list[tuple[str, dict[str, str]]]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        type(self).calls.append((self.path, dict(self.headers)))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[tuple[int, Calls]]:
    class Endpoint(_Endpoint):
        calls: ClassVar[Calls] = []

    handler = Endpoint
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], handler.calls
    finally:
        server.shutdown()
        server.server_close()


def http_hook(url: str) -> dict[str, Any]:
    return {
        "type": "http",
        "url": url,
        "headers": {"Authorization": "Bearer $MY_TOKEN", "X-Other": "${OTHER}"},
        "allowedEnvVars": ["MY_TOKEN", "OTHER"],
    }


async def run(tmp_path: Path, **kw: Any) -> list[str]:
    with MessagesServer([turn(text("done"))]) as server:
        agent = Agent("claude-sonnet-5-5", base_url=server.base_url, cwd=tmp_path, **kw)
        try:
            await agent.run("hi")
            return list(agent.notices)
        finally:
            await agent.aclose()


async def test_settings_limit_http_hooks_urls_and_env_vars(
    tmp_path: Path, endpoint: tuple[int, Calls]
) -> None:
    port, calls = endpoint
    allowed, blocked = f"http://127.0.0.1:{port}/allowed", f"http://127.0.0.1:{port}/blocked"
    write(
        Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json",
        {
            "env": {"MY_TOKEN": "s3cret", "OTHER": "leak"},
            "hooks": {"UserPromptSubmit": [{"hooks": [http_hook(allowed), http_hook(blocked)]}]},
            "allowedHttpHookUrls": ["http://127.0.0.1:*/allowed*"],
            "httpHookAllowedEnvVars": ["MY_TOKEN"],
        },
    )
    notices = await run(tmp_path)
    assert [path for path, _ in calls] == ["/allowed"]
    headers = calls[0][1]
    assert headers["Authorization"] == "Bearer s3cret"
    assert headers["X-Other"] == ""  # the hook allows OTHER, the settings do not
    told = [n for n in notices if blocked in n]
    assert told and any("allowedHttpHookUrls" in n for n in told)
    assert not any("does not use" in n and "allowedHttpHookUrls" in n for n in notices)


async def test_the_limits_hold_for_hooks_given_in_code(
    tmp_path: Path, endpoint: tuple[int, Calls]
) -> None:
    port, calls = endpoint
    write(Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json", {"allowedHttpHookUrls": []})
    hook = HttpHook(f"http://127.0.0.1:{port}/code")
    notices = await run(tmp_path, hooks={"UserPromptSubmit": [HookMatcher("", [hook])]})
    assert calls == []
    assert any("allowedHttpHookUrls" in n and "/code" in n for n in notices)


def test_an_untrusted_project_cannot_widen_the_limits(tmp_path: Path) -> None:
    write(Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json", {"allowedHttpHookUrls": []})
    write(
        tmp_path / ".claude" / "settings.json",
        {"allowedHttpHookUrls": ["https://*"], "httpHookAllowedEnvVars": ["HOME"]},
    )
    ws = load_workspace(tmp_path, trust_override=False)
    assert ws.settings.http_hooks.allowed_urls == ()
    assert ws.settings.http_hooks.allowed_env_vars is None
    assert any("allowedHttpHookUrls (an untrusted project" in n for n in ws.settings.ignored)
    assert any("allowedHttpHookUrls" in n and "not trusted" in n for n in ws.notices)
