"""WebFetch through the real Agent, against a local page server on 127.0.0.1 (no network):
HTML becomes Markdown, the page is capped, a redirect to another host is reported and not
followed, one to the same host is followed, the call's prompt is answered by the small model
in a side request, and `WebFetch(domain:…)` rules allow, deny or ask."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agent_support import agent_on, messages_json
from queryloop.loop import Terminal
from queryloop.permissions import PermissionRequest
from queryloop.testing import MessagesServer, text, tool_use, turn
from queryloop.tools.builtin._web_page import (
    CACHE_SECONDS,
    MAX_CONTENT_CHARS,
    TRUNCATED_NOTE,
    Page,
    PageCache,
    same_host,
    upgraded,
    url_problem,
)

SMALL_MODEL = "claude-haiku-5-5"
PAGE = """<html><head><title>Release notes</title><style>p { color: red }</style>
<script>var secret = "do not show";</script></head>
<body><h1>Hello</h1><p>Version <b>2.0</b> is out. See <a href="/changes">the changes</a>.</p>
<ul><li>faster</li><li>smaller</li></ul></body></html>"""


@dataclass
class PageServer:
    """A tiny web server: fixed pages and redirects; `hits` lists the paths asked for."""

    port: int = 0
    hits: list[str] = field(default_factory=list)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def routes(self) -> Mapping[str, tuple[int, dict[str, str], str]]:
        html = {"content-type": "text/html; charset=utf-8"}
        return {
            "/page": (200, html, PAGE),
            "/big": (200, html, "<p>" + "word " * 40_000 + "</p>"),
            "/same": (302, {"location": "/page"}, ""),
            "/away": (301, {"location": self.url("/page", host="localhost")}, ""),
        }


@pytest.fixture
def pages() -> Iterator[PageServer]:
    state = PageServer()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

        def do_GET(self) -> None:
            state.hits.append(self.path)
            status, headers, body = state.routes().get(self.path, (404, {}, "not found"))
            data = body.encode()
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def fetch(url: str, prompt: str = "What is new?") -> Any:
    return tool_use("WebFetch", {"url": url, "prompt": prompt})


def tool_result_text(body: dict[str, Any]) -> str:
    """The text of the last tool_result in a request."""
    for message in reversed(body["messages"]):
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block["content"]
                return content if isinstance(content, str) else str(content)
    raise AssertionError("no tool_result in the request")


async def test_the_prompt_is_answered_by_the_small_model_over_the_page_as_markdown(
    pages: PageServer, tmp_path: Path, home: Path
) -> None:
    script = [
        turn(fetch(pages.url("/page"), "What version is out?")),
        turn(text("Version 2.0 is out; it is faster and smaller.")),  # the small model
        turn(text("2.0 is out.")),
    ]
    allow = ["WebFetch(domain:127.0.0.1)"]
    with MessagesServer(script, strict=True) as server:
        agent = agent_on(server, tmp_path, home, allowed_tools=allow)
        result = await agent.run("What is new?")
        await agent.aclose()
    assert result.terminal is Terminal.COMPLETED and result.text == "2.0 is out."
    _, side, last = server.requests
    assert side["model"] == SMALL_MODEL and "tools" not in side and "system" not in side
    asked = side["messages"][0]["content"][0]["text"]
    assert "# Hello" in asked and "**2.0**" in asked and "[the changes](/changes)" in asked
    assert "- faster" in asked and "What version is out?" in asked
    assert "secret" not in asked and "color: red" not in asked and "<p>" not in asked
    assert tool_result_text(last) == "Version 2.0 is out; it is faster and smaller."
    assert pages.hits == ["/page"]  # plain http to a loopback host: not upgraded to https
    assert result.requests == 3  # the side request is billed into the run


async def test_a_redirect_to_another_host_is_reported_not_followed(
    pages: PageServer, tmp_path: Path, home: Path
) -> None:
    script = [turn(fetch(pages.url("/away"))), turn(text("It moved."))]
    with MessagesServer(script, strict=True) as server:
        agent = agent_on(server, tmp_path, home, allowed_tools=["WebFetch"])
        result = await agent.run("Read it.")
        await agent.aclose()
    said = tool_result_text(server.requests[1])
    assert f"Redirect URL: {pages.url('/page', host='localhost')}" in said
    assert "call WebFetch again with the redirect URL" in said and "301" in said
    assert pages.hits == ["/away"] and result.requests == 2  # no fetch, no side request


async def test_a_same_host_redirect_is_followed_and_a_big_page_is_capped_and_cached(
    pages: PageServer, tmp_path: Path, home: Path
) -> None:
    script = [
        turn(fetch(pages.url("/same"))),
        turn(text("Hello, 2.0.")),  # the small model, over /page
        turn(fetch(pages.url("/big"))),
        turn(text("Many words.")),  # the small model, over /big
        turn(fetch(pages.url("/big"), "Again?")),
        turn(text("Still many words.")),  # the small model, over the cached /big
        turn(text("Done.")),
    ]
    with MessagesServer(script, strict=True) as server:
        agent = agent_on(server, tmp_path, home, allowed_tools=["WebFetch(domain:127.0.0.1)"])
        await agent.run("Read them.")
        await agent.aclose()
    assert pages.hits == ["/same", "/page", "/big"]  # the second /big came from the cache
    first_page = server.requests[1]["messages"][0]["content"][0]["text"]
    assert "# Hello" in first_page
    big = server.requests[3]["messages"][0]["content"][0]["text"]
    assert TRUNCATED_NOTE in big and len(big) < MAX_CONTENT_CHARS + 1_000
    assert "word " * 100 in big


async def test_domain_rules_deny_and_otherwise_ask_with_the_domain_rule_suggested(
    pages: PageServer, tmp_path: Path, home: Path
) -> None:
    asked: list[PermissionRequest] = []

    async def refuse(name: str, input: Mapping[str, Any], request: PermissionRequest) -> bool:
        asked.append(request)
        return False

    script = [turn(fetch(pages.url("/page"))), turn(text("Refused."))]
    with MessagesServer(script * 2, strict=True) as server:
        denied = agent_on(server, tmp_path, home, disallowed_tools=["WebFetch(domain:127.0.0.1)"])
        result = await denied.run("Fetch.")
        await denied.aclose()
        other = agent_on(
            server, tmp_path, home, allowed_tools=["WebFetch(domain:example.com)"],
            can_use_tool=refuse,
        )  # fmt: skip
        await other.run("Fetch.")
        await other.aclose()
    assert [d.tool_name for d in result.denials] == ["WebFetch"] and not asked[1:]
    assert len(asked) == 1 and asked[0].suggested_rule == "WebFetch(domain:127.0.0.1)"
    assert "127.0.0.1" in asked[0].reason
    assert pages.hits == []  # neither call fetched anything
    assert "denied" in messages_json(server.requests[1]).lower()


def test_the_url_rules_follow_claude_code() -> None:
    assert upgraded("http://example.com/a?b=1") == "https://example.com/a?b=1"
    assert upgraded("http://127.0.0.1:8080/a") == "http://127.0.0.1:8080/a"
    assert upgraded("http://localhost:3000/") == "http://localhost:3000/"
    assert same_host("https://example.com/a", "https://www.example.com/b")
    assert not same_host("https://example.com/a", "https://example.org/a")
    assert not same_host("https://example.com/a", "http://example.com/a")
    assert url_problem("https://user:pw@example.com/") is not None
    assert url_problem("ftp://example.com/") is not None
    assert url_problem("https://intranet/") is not None
    assert url_problem("https://" + "a" * 2_000 + ".com/") is not None
    assert url_problem("https://docs.python.org/3/") is None


def test_cached_pages_expire_after_fifteen_minutes() -> None:
    now = [1_000.0]
    cache = PageCache(clock=lambda: now[0])
    page = Page("https://example.com/", 200, "OK", 10, "hello")
    cache.put(page.url, page)
    now[0] += CACHE_SECONDS - 1
    assert cache.get(page.url) is page
    now[0] += 2
    assert cache.get(page.url) is None
