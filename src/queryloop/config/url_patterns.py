"""URL patterns with `*` wildcards, as Claude Code's URL allowlists read them.

Used by `allowedMcpServers`/`deniedMcpServers` (`serverUrl` entries, `config.mcp_policy`)
and `allowedHttpHookUrls` (`config.hook_policy`). Claude Code's rules
(code.claude.com/docs/en/managed-mcp, "How a server is evaluated"; settings reference,
`allowedHttpHookUrls`): `*` matches any sequence anywhere in the pattern, the scheme
included; host names compare case-insensitively and a trailing dot (`example.com.`) is the
same host; paths stay case-sensitive; a pattern without a path matches every path.

The pattern and the URL are compared part by part (scheme, host and port, the rest), so a
`*` in the host can never reach into the path: `https://*.example.com` does not match
`https://evil.test/.example.com`. A URL's user information (`user@`) is not part of its
host. A pattern without `://` matches nothing (an allowlist entry that cannot match only
narrows; a denylist entry is checked when it is read).
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urlsplit

_END_OF_AUTHORITY = re.compile(r"[/?#]")


def is_url_pattern(pattern: str) -> bool:
    """True when `pattern` has the `scheme://host` shape a URL pattern needs."""
    scheme, sep, rest = pattern.partition("://")
    return bool(sep and scheme and _split_authority(rest)[0])


def url_matches(pattern: str, url: str) -> bool:
    """True when `url` matches the pattern (see the module docstring)."""
    parts = _url_parts(url)
    if parts is None:
        return False
    compiled = _compile(pattern)
    if compiled is None:
        return False
    scheme, authority, rest = compiled
    if not (scheme.fullmatch(parts[0]) and authority.fullmatch(parts[1])):
        return False
    return rest is None or rest.fullmatch(parts[2]) is not None


def _url_parts(url: str) -> tuple[str, str, str] | None:
    """(scheme, host[:port], everything after the authority) of a URL, normalised."""
    try:
        split = urlsplit(url)
        port = split.port
    except ValueError:
        return None
    host = (split.hostname or "").rstrip(".")
    if not split.scheme or not host:
        return None
    authority = f"{host}:{port}" if port is not None else host
    rest = split.path
    if split.query:
        rest += f"?{split.query}"
    if split.fragment:
        rest += f"#{split.fragment}"
    return split.scheme.lower(), authority, rest


@lru_cache(maxsize=256)
def _compile(
    pattern: str,
) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str] | None] | None:
    scheme, sep, rest = pattern.partition("://")
    if not sep or not scheme:
        return None
    authority, remainder = _split_authority(rest)
    if not authority:
        return None
    host, colon, port = authority.rpartition(":") if _has_port(authority) else (authority, "", "")
    authority = host.lower().rstrip(".") + colon + port
    path = _wildcard(remainder) if remainder else None  # no path: every path
    return _wildcard(scheme.lower()), _wildcard(authority), path


def _split_authority(rest: str) -> tuple[str, str]:
    found = _END_OF_AUTHORITY.search(rest)
    if found is None:
        return rest, ""
    return rest[: found.start()], rest[found.start() :]


def _has_port(authority: str) -> bool:
    _, colon, port = authority.rpartition(":")
    return bool(colon) and (port == "*" or port.isdigit())


def _wildcard(text: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(piece) for piece in text.split("*")))
