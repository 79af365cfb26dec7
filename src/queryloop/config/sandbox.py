"""The `sandbox` settings key (Claude Code's names and meanings; docs/sandbox.md).

Implemented: `enabled`, `failIfUnavailable`, `autoAllowBashIfSandboxed`,
`excludedCommands`, `allowUnsandboxedCommands` (false is all we do: no command ever retries
outside the sandbox), `filesystem.allowWrite` / `denyWrite` / `denyRead`,
`network.allowedDomains` / `deniedDomains` / `allowManagedDomainsOnly` /
`allowUnixSockets` / `allowAllUnixSockets`. The other keys
Claude Code documents are warned about by name and ignored; any other key is unknown.

Scalars take the last file that sets them (managed settings win); lists concatenate. An
untrusted project may only tighten the sandbox: it may turn it on, require it
(`failIfUnavailable: true`), deny reads, writes and domains, but not turn it off, exclude
commands, auto-allow, or add writable paths or domains (those go to `Settings.ignored`).
Paths: `//abs` and `/abs` are absolute, `~/x` is in the home folder, a relative path is
relative to the project (project files) or to the settings file's folder (user, managed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..sandbox.domains import DomainPattern
from .settings_file import FileContext

SANDBOX_KEYS = frozenset(
    {
        "enabled",
        "failIfUnavailable",
        "autoAllowBashIfSandboxed",
        "excludedCommands",
        "allowUnsandboxedCommands",
        "filesystem",
        "network",
    }
)
FILESYSTEM_KEYS = frozenset({"allowWrite", "denyWrite", "denyRead"})
NETWORK_KEYS = frozenset(
    {
        "allowedDomains",
        "deniedDomains",
        "allowManagedDomainsOnly",
        "allowUnixSockets",
        "allowAllUnixSockets",
    }
)
NOT_IMPLEMENTED = {
    "": frozenset(
        {
            "ignoreViolations",
            "enableWeakerNestedSandbox",
            "enableWeakerNetworkIsolation",
            "enabledPlatforms",
            "allowAppleEvents",
            "allowNestedUserNamespaces",
            "ripgrep",
            "credentials",
            "bwrapPath",
            "socatPath",
        }
    ),
    "filesystem.": frozenset({"allowRead", "allowManagedReadPathsOnly", "disabled"}),
    "network.": frozenset(
        {
            "allowLocalBinding",
            "allowMachLookup",
            "httpProxyPort",
            "socksProxyPort",
            "tlsTerminate",
            "strictAllowlist",
        }
    ),
}
"""Claude Code's sandbox keys that queryloop does not implement: warned about by name."""

Problem = Callable[[str, str, bool], None]
"""(key to locate, message, is_error) -> None: how a problem is reported."""


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """The merged `sandbox` settings (paths absolute, domains checked)."""

    enabled: bool = False
    fail_if_unavailable: bool = False
    auto_allow: bool = False
    """Effective `autoAllowBashIfSandboxed`: its trusted value, else Claude Code's default
    (true) only when a trusted file turned the sandbox on."""
    excluded_commands: tuple[str, ...] = ()
    allow_write: tuple[Path, ...] = ()
    deny_write: tuple[Path, ...] = ()
    deny_read: tuple[Path, ...] = ()
    allowed_domains: tuple[str, ...] = ()
    denied_domains: tuple[str, ...] = ()
    allow_unix_sockets: tuple[Path, ...] = ()
    """`network.allowUnixSockets`: the unix sockets a sandboxed command may connect to."""
    allow_all_unix_sockets: bool = False
    """`network.allowAllUnixSockets`: no unix socket is refused."""


class SandboxMerger:
    """Accumulates the `sandbox` key of each file, in precedence order."""

    def __init__(self) -> None:
        self.enabled = False
        self.enabled_by_trusted = False
        self.fail_if_unavailable = False
        self.auto_allow: bool | None = None
        self.all_unix_sockets = False
        self.lists: dict[str, list[str]] = {
            "excludedCommands": [],
            "allowedDomains": [],
            "deniedDomains": [],
        }
        self.paths: dict[str, list[Path]] = {
            "allowWrite": [],
            "denyWrite": [],
            "denyRead": [],
            "allowUnixSockets": [],
        }

    def result(self) -> SandboxSettings:
        """The merged settings."""
        auto = self.auto_allow if self.auto_allow is not None else self.enabled_by_trusted
        return SandboxSettings(
            enabled=self.enabled,
            fail_if_unavailable=self.fail_if_unavailable,
            auto_allow=auto,
            excluded_commands=tuple(self.lists["excludedCommands"]),
            allow_write=tuple(self.paths["allowWrite"]),
            deny_write=tuple(self.paths["denyWrite"]),
            deny_read=tuple(self.paths["denyRead"]),
            allowed_domains=tuple(self.lists["allowedDomains"]),
            denied_domains=tuple(self.lists["deniedDomains"]),
            allow_unix_sockets=tuple(self.paths["allowUnixSockets"]),
            allow_all_unix_sockets=self.all_unix_sockets,
        )

    def add(self, data: Mapping[str, object], ctx: FileContext) -> None:
        """One file's `sandbox` value: wrong types and values are problems; what an untrusted
        file asked for that would loosen the sandbox is listed as ignored."""
        raw = data.get("sandbox")
        if raw is None:
            return
        if not isinstance(raw, Mapping):
            ctx.problem("sandbox", "'sandbox' must be an object")
            return
        _File(self, ctx.root, ctx.trusted, ctx.managed, ctx.flag, ctx.ignore).add(raw)


class _File:
    """One file's `sandbox` object being added to the merger."""

    def __init__(
        self,
        merger: SandboxMerger,
        root: Path,
        trusted: bool,
        managed: bool,
        problem: Problem,
        ignore: Callable[[str], None],
    ) -> None:
        self.m = merger
        self.root = root
        self.trusted = trusted
        self.managed = managed
        self.problem = problem
        self.ignore = ignore

    def add(self, raw: Mapping[str, object]) -> None:
        self._keys(raw, SANDBOX_KEYS, "")
        self._flags(raw)
        excluded = self._strings(raw, "excludedCommands", "")
        if excluded and not self.trusted:
            self.ignore("sandbox.excludedCommands " + ", ".join(excluded))
        else:
            self.m.lists["excludedCommands"] += excluded
        filesystem = self._object(raw, "filesystem")
        self._keys(filesystem, FILESYSTEM_KEYS, "filesystem.")
        for key in ("allowWrite", "denyWrite", "denyRead"):
            self._paths(filesystem, key, loosens=key == "allowWrite")
        network = self._object(raw, "network")
        self._keys(network, NETWORK_KEYS, "network.")
        self._domains(network)
        self._unix_sockets(network)

    def _flags(self, raw: Mapping[str, object]) -> None:
        enabled = self._bool(raw, "enabled")
        if enabled is not None and self._tightens("enabled", enabled, tight=True):
            self.m.enabled = enabled
            self.m.enabled_by_trusted = enabled and (self.trusted or self.m.enabled_by_trusted)
        required = self._bool(raw, "failIfUnavailable")
        if required is not None and self._tightens("failIfUnavailable", required, tight=True):
            self.m.fail_if_unavailable = required
        auto = self._bool(raw, "autoAllowBashIfSandboxed")
        if auto is not None and self._tightens("autoAllowBashIfSandboxed", auto, tight=False):
            self.m.auto_allow = auto
        if self._bool(raw, "allowUnsandboxedCommands"):
            self.problem(
                "allowUnsandboxedCommands",
                "'sandbox.allowUnsandboxedCommands': queryloop never retries a command outside "
                "the sandbox (ignored; use excludedCommands)",
                False,
            )

    def _tightens(self, key: str, value: bool, *, tight: bool) -> bool:
        """True when this file may set `key` to `value` (an untrusted one: only `tight`)."""
        if self.trusted or value == tight:
            return True
        self.ignore(f"sandbox.{key} {str(value).lower()}")
        return False

    def _domains(self, network: Mapping[str, object]) -> None:
        allowed = self._checked_domains(network, "allowedDomains")
        denied = self._checked_domains(network, "deniedDomains")
        self.m.lists["deniedDomains"] += denied
        if allowed and not self.trusted:
            self.ignore("sandbox.network.allowedDomains " + ", ".join(allowed))
        else:
            self.m.lists["allowedDomains"] += allowed
        if self._bool(network, "allowManagedDomainsOnly", "network.") and self.managed:
            self.m.lists["allowedDomains"] = allowed  # managed is the last file read

    def _unix_sockets(self, network: Mapping[str, object]) -> None:
        """`allowUnixSockets` / `allowAllUnixSockets` loosen the sandbox: trusted files only."""
        texts = self._strings(network, "allowUnixSockets", "network.")
        every = self._bool(network, "allowAllUnixSockets", "network.")
        if not self.trusted:
            if texts:
                self.ignore("sandbox.network.allowUnixSockets " + ", ".join(texts))
            if every:
                self.ignore("sandbox.network.allowAllUnixSockets true")
            return
        self.m.paths["allowUnixSockets"] += [sandbox_path(t, self.root) for t in texts]
        if every is not None:
            self.m.all_unix_sockets = every

    def _checked_domains(self, raw: Mapping[str, object], key: str) -> list[str]:
        good: list[str] = []
        for text in self._strings(raw, key, "network."):
            try:
                DomainPattern.parse(text)
            except ConfigError as exc:
                self.problem(text, f"'sandbox.network.{key}': {exc}", True)
                continue
            good.append(text)
        return good

    def _paths(self, raw: Mapping[str, object], key: str, *, loosens: bool) -> None:
        texts = self._strings(raw, key, "filesystem.")
        if texts and loosens and not self.trusted:
            self.ignore(f"sandbox.filesystem.{key} " + ", ".join(texts))
            return
        self.m.paths[key] += [sandbox_path(t, self.root) for t in texts]

    def _keys(self, raw: Mapping[str, object], known: frozenset[str], where: str) -> None:
        for key in raw:
            if key in NOT_IMPLEMENTED[where]:
                name = f"sandbox.{where}{key}"
                self.problem(
                    key,
                    f"'{name}' is a Claude Code setting queryloop does not implement (ignored)",
                    False,
                )
            elif key not in known:
                self.problem(key, f"unknown key 'sandbox.{where}{key}' (ignored)", False)

    def _object(self, raw: Mapping[str, object], key: str) -> Mapping[str, object]:
        value = raw.get(key)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.problem(key, f"'sandbox.{key}' must be an object", True)
            return {}
        return value

    def _bool(self, raw: Mapping[str, object], key: str, where: str = "") -> bool | None:
        value = raw.get(key)
        if value is None or isinstance(value, bool):
            return value
        self.problem(key, f"'sandbox.{where}{key}' must be true or false", True)
        return None

    def _strings(self, raw: Mapping[str, object], key: str, where: str) -> list[str]:
        value = raw.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.problem(key, f"'sandbox.{where}{key}' must be a list of strings", True)
            return []
        return list(value)


def sandbox_path(text: str, root: Path) -> Path:
    """A sandbox path setting as an absolute path (see the module docstring)."""
    if text.startswith("//"):
        return Path(text[1:])
    if text == "~" or text.startswith("~/"):
        return Path(text).expanduser()
    path = Path(text)
    return path if path.is_absolute() else root / path
