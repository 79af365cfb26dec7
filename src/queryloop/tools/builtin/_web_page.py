"""Fetching one web page for WebFetch: the URL rules, the redirect rule, HTML to Markdown,
the size caps and the 15-minute cache, as Claude Code's WebFetch has them (docs/tools.md).

- A URL is at most `MAX_URL_CHARS` long, http or https, without user name or password, and
  its host has a dot (`localhost` alone is refused; `127.0.0.1` is not).
- `http://` is upgraded to `https://`, except for a loopback host (`127.0.0.1`, `::1`,
  `localhost`): a local server seldom speaks TLS and the request never leaves the machine.
- A redirect is followed only to the same host (a leading `www.` aside), scheme and port;
  one to another host is returned as a `Redirect` for the model to decide about.
- At most `MAX_FETCH_BYTES` are read; HTML becomes Markdown (markdownify over a
  BeautifulSoup tree without scripts and styles), other text is kept as it is; the text is
  cut at `MAX_CONTENT_CHARS`.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit, urlunsplit

if TYPE_CHECKING:
    import httpx

# httpx, BeautifulSoup and markdownify are imported where a page is fetched: every session
# builds this tool, few fetch a page, and the command line must not pay for them before its
# first request (httpx alone brings click, rich and pygments; tests/cli/test_cli_startup.py).

MAX_URL_CHARS = 2_000
MAX_FETCH_BYTES = 10 * 1024 * 1024
MAX_CONTENT_CHARS = 100_000
TRUNCATED_NOTE = "...[content truncated]"
CACHE_SECONDS = 15 * 60
MAX_REDIRECTS = 10
TIMEOUT_S = 30.0
REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
_DROPPED_TAGS = ("script", "style", "noscript", "template", "head", "svg", "iframe")
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/javascript")


class FetchError(Exception):
    """The page could not be fetched; the message is for the model."""


@dataclass(frozen=True, slots=True)
class Page:
    """A fetched page: its text (Markdown for HTML, capped) and how it was answered."""

    url: str
    status: int
    reason: str
    bytes: int
    content: str
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class Redirect:
    """The page redirects to another host, which was not followed."""

    url: str
    location: str
    status: int
    reason: str


def url_problem(url: str) -> str | None:
    """Why WebFetch will not fetch `url`, or None."""
    if len(url) > MAX_URL_CHARS:
        return f"the URL is longer than {MAX_URL_CHARS} characters"
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        return f"the URL could not be parsed ({exc})"
    if parts.scheme not in ("http", "https"):
        return "only http and https URLs can be fetched"
    if parts.username or parts.password:
        return "a URL with a user name or password is not fetched"
    if "." not in host and not _is_ip(host):
        return f"the host {host!r} is not a full domain name"
    return None


def upgraded(url: str) -> str:
    """`url` with `http:` upgraded to `https:`, except for a loopback host."""
    parts = urlsplit(url)
    if parts.scheme != "http" or is_loopback(parts.hostname or ""):
        return url
    return urlunsplit(parts._replace(scheme="https"))


def is_loopback(host: str) -> bool:
    """`localhost`, 127.0.0.0/8 or ::1."""
    if host.lower() == "localhost":
        return True
    return _is_ip(host) and ipaddress.ip_address(host).is_loopback


def same_host(original: str, target: str) -> bool:
    """Claude Code's rule for following a redirect: same scheme, port and host (`www.`
    aside), no credentials."""
    a, b = urlsplit(original), urlsplit(target)
    if (a.scheme, a.port) != (b.scheme, b.port) or b.username or b.password:
        return False
    return _bare(a.hostname) == _bare(b.hostname)


def to_markdown(html: str) -> str:
    """The page's body as Markdown, without scripts, styles and the like."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup.find_all(_DROPPED_TAGS):
        tag.decompose()
    markdown = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    lines = [line.rstrip() for line in str(markdown).splitlines()]
    return "\n".join(lines).strip()


def page_text(body: bytes, content_type: str, encoding: str | None) -> str:
    """The text of a response: HTML as Markdown, other text as it is. Raises `FetchError`
    for content that is not text."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind and not kind.startswith(_TEXT_TYPES) and "html" not in kind and "+xml" not in kind:
        raise FetchError(f"the page is {kind}, not text; WebFetch reads text and HTML pages")
    text = body.decode(encoding or "utf-8", errors="replace")
    return (
        to_markdown(text)
        if "html" in kind or (not kind and "<html" in text[:1000].lower())
        else text
    )


def capped(content: str) -> tuple[str, bool]:
    """At most `MAX_CONTENT_CHARS` characters, with a note where it was cut."""
    if len(content) <= MAX_CONTENT_CHARS:
        return content, False
    return content[:MAX_CONTENT_CHARS] + TRUNCATED_NOTE, True


@dataclass
class PageCache:
    """Pages fetched in the last `CACHE_SECONDS`, by the URL asked for (one per WebFetch
    tool, so per session). `clock` is injectable for tests."""

    clock: Callable[[], float] = time.monotonic
    seconds: float = CACHE_SECONDS
    _pages: dict[str, tuple[float, Page]] = field(default_factory=dict)

    def get(self, url: str) -> Page | None:
        """The cached page, when it is fresh."""
        now = self.clock()
        self._pages = {u: e for u, e in self._pages.items() if now - e[0] < self.seconds}
        entry = self._pages.get(url)
        return entry[1] if entry is not None else None

    def put(self, url: str, page: Page) -> None:
        """Remember a page fetched now."""
        self._pages[url] = (self.clock(), page)


async def fetch_page(url: str, client: httpx.AsyncClient) -> Page | Redirect:
    """GET `url` (upgraded), following same-host redirects only. Raises `FetchError`."""
    current = upgraded(url)
    for _ in range(MAX_REDIRECTS + 1):
        outcome = await _get(current, client)
        if isinstance(outcome, Page):
            return outcome
        if not same_host(current, outcome.location):
            return outcome
        current = outcome.location
    raise FetchError(f"more than {MAX_REDIRECTS} redirects")


async def _get(url: str, client: httpx.AsyncClient) -> Page | Redirect:
    import httpx

    try:
        async with client.stream("GET", url, follow_redirects=False) as response:
            if response.status_code in REDIRECT_CODES:
                location = response.headers.get("location")
                if not location:
                    raise FetchError(f"{url} answered {response.status_code} without a Location")
                target = urljoin(url, location)
                return Redirect(url, target, response.status_code, response.reason_phrase)
            if response.status_code >= 400:
                raise FetchError(f"{url} answered {response.status_code} {response.reason_phrase}")
            body = await _read_capped(response)
            text = page_text(body, response.headers.get("content-type", ""), response.encoding)
    except httpx.HTTPError as exc:
        raise FetchError(f"could not fetch {url}: {exc or type(exc).__name__}") from exc
    content, truncated = capped(text)
    return Page(url, response.status_code, response.reason_phrase, len(body), content, truncated)


async def _read_capped(response: httpx.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_FETCH_BYTES:
            raise FetchError(
                f"the page is larger than {MAX_FETCH_BYTES // (1024 * 1024)} MB; not read"
            )
    return b"".join(chunks)


def _bare(host: str | None) -> str:
    host = (host or "").lower()
    return host[4:] if host.startswith("www.") else host


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
