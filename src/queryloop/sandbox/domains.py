"""Which hosts the sandbox's proxy admits: `sandbox.network.allowedDomains` patterns.

A pattern is a host name (`example.com`), a wildcard for its subdomains (`*.example.com`:
`api.example.com`, not `example.com` itself) or an IP address, with an optional `:port`
that limits it to one port (Claude Code's syntax). Names compare case-insensitively and
without a trailing dot. `deniedDomains` use the same patterns and win over allowed ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import ConfigError


@dataclass(frozen=True, slots=True)
class DomainPattern:
    """One parsed entry of `allowedDomains` / `deniedDomains`."""

    host: str
    """Lower-case, no trailing dot; for a wildcard, the part after `*.`."""
    wildcard: bool = False
    port: int | None = None

    @classmethod
    def parse(cls, text: str) -> DomainPattern:
        """Parse `example.com`, `*.example.com`, `example.com:443`, `[::1]:8080`."""
        raw = text.strip()
        port: int | None = None
        host = raw
        if raw.startswith("["):
            end = raw.find("]")
            host, rest = raw[1:end], raw[end + 1 :]
            if end < 0 or (rest and not rest.startswith(":")):
                raise ConfigError(f"{text!r} is not a host pattern")
            port = _port(text, rest[1:]) if rest else None
        elif raw.count(":") == 1:
            host, _, port_text = raw.partition(":")
            port = _port(text, port_text)
        wildcard = host.startswith("*.")
        host = normalize_host(host[2:] if wildcard else host)
        if not host or "*" in host or "/" in host or " " in host:
            raise ConfigError(
                f"{text!r} is not a host pattern (use example.com, *.example.com or host:port)"
            )
        return cls(host, wildcard, port)

    def matches(self, host: str, port: int) -> bool:
        """True when this pattern admits `host` (normalized) on `port`."""
        if self.port is not None and self.port != port:
            return False
        if self.wildcard:
            return host.endswith("." + self.host)
        return host == self.host


def normalize_host(host: str) -> str:
    """Lower case, brackets and a trailing dot removed: how hosts are compared."""
    return host.strip().strip("[]").rstrip(".").lower()


def _port(text: str, value: str) -> int:
    if not value.isdigit() or not 0 < int(value) < 65536:
        raise ConfigError(f"{text!r}: the port must be a number from 1 to 65535")
    return int(value)


@dataclass(frozen=True, slots=True)
class DomainFilter:
    """The allowed and denied patterns together: what the proxy asks."""

    allowed: tuple[DomainPattern, ...]
    denied: tuple[DomainPattern, ...] = ()

    @classmethod
    def of(cls, allowed: Sequence[str], denied: Sequence[str] = ()) -> DomainFilter:
        """Parse both lists (a bad entry raises `ConfigError`)."""
        return cls(
            tuple(DomainPattern.parse(a) for a in allowed),
            tuple(DomainPattern.parse(d) for d in denied),
        )

    def admits(self, host: str, port: int) -> bool:
        """True when an allowed pattern matches and no denied one does."""
        name = normalize_host(host)
        return not self.denies(name, port) and any(p.matches(name, port) for p in self.allowed)

    def denies(self, host: str, port: int) -> bool:
        """True when a denied pattern matches."""
        name = normalize_host(host)
        return any(p.matches(name, port) for p in self.denied)
