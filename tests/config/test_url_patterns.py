"""URL patterns with `*` (`config.url_patterns`), as Claude Code's `serverUrl` entries and
`allowedHttpHookUrls` read them."""

from __future__ import annotations

import pytest

from queryloop.config.url_patterns import is_url_pattern, url_matches


@pytest.mark.parametrize(
    ("pattern", "url", "matches"),
    [
        ("https://mcp.example.com/*", "https://mcp.example.com/v1/mcp", True),
        ("https://mcp.example.com", "https://mcp.example.com/any/path", True),
        ("https://*.example.com/*", "https://api.example.com/x", True),
        ("https://*.example.com/*", "https://evil.test/.example.com/x", False),
        ("https://*.example.com", "https://evil.test/a.example.com", False),
        ("https://*.example.com/*", "https://user@api.example.com/x", True),
        ("https://example.com/*", "https://example.com@evil.test/x", False),
        ("https://EXAMPLE.com/Path", "https://example.com./Path", True),
        ("https://example.com/Path", "https://example.com/path", False),
        ("http://localhost:*", "http://localhost:8080/hook", True),
        ("http://localhost:*", "http://localhost.evil.test:80/hook", False),
        ("*://hooks.example.com/*", "http://hooks.example.com/a", True),
        ("https://example.com/*", "http://example.com/a", False),
        ("example.com/*", "https://example.com/a", False),
    ],
)
def test_url_matches(pattern: str, url: str, matches: bool) -> None:
    assert url_matches(pattern, url) is matches


def test_is_url_pattern() -> None:
    assert is_url_pattern("https://*.example.com/*")
    assert not is_url_pattern("example.com/*")
    assert not is_url_pattern("https:///path")
