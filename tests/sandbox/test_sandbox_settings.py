"""The `sandbox` settings key: Claude Code's names, wrong types are errors at file:line:col,
unimplemented keys warn by name, and an untrusted project can only tighten the sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from file_support import write_json as write
from queryloop.config import load_settings
from queryloop.config.settings import Severity


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    project, home = tmp_path / "repo", tmp_path / "qlhome"
    project.mkdir()
    home.mkdir()
    return project, home


FULL = {
    "enabled": True,
    "failIfUnavailable": True,
    "autoAllowBashIfSandboxed": False,
    "excludedCommands": ["docker *"],
    "filesystem": {
        "allowWrite": ["//opt/build", "~/.kube", "out"],
        "denyWrite": ["/etc/keep"],
        "denyRead": ["~/.aws/credentials"],
    },
    "network": {"allowedDomains": ["github.com", "*.npmjs.org"], "deniedDomains": ["x.com"]},
}


def test_every_key_is_read_with_claude_codes_meaning(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(home / "settings.json", {"sandbox": FULL})
    settings = load_settings(project, user_home=home, trusted=True)
    assert settings.errors == () and settings.problems == ()
    sandbox = settings.sandbox
    assert sandbox.enabled and sandbox.fail_if_unavailable and not sandbox.auto_allow
    assert sandbox.excluded_commands == ("docker *",)
    assert sandbox.allow_write == (Path("/opt/build"), Path("~/.kube").expanduser(), home / "out")
    assert sandbox.deny_write == (Path("/etc/keep"),)
    assert sandbox.deny_read == (Path("~/.aws/credentials").expanduser(),)
    assert sandbox.allowed_domains == ("github.com", "*.npmjs.org")
    assert sandbox.denied_domains == ("x.com",)


def test_auto_allow_defaults_to_true_when_a_trusted_file_turns_it_on(
    dirs: tuple[Path, Path],
) -> None:
    project, home = dirs
    write(home / "settings.json", {"sandbox": {"enabled": True}})
    assert load_settings(project, user_home=home, trusted=True).sandbox.auto_allow


def test_wrong_types_are_errors_with_their_position(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    path = write(
        home / "settings.json",
        {
            "sandbox": {
                "enabled": "yes",
                "excludedCommands": "git",
                "filesystem": {"denyRead": [1]},
                "network": {"allowedDomains": ["bad host/path"]},
            }
        },
    )
    errors = load_settings(project, user_home=home, trusted=True).errors
    text = [str(e) for e in errors]
    assert f"{path}:3:5: 'sandbox.enabled' must be true or false" in text
    assert f"{path}:4:5: 'sandbox.excludedCommands' must be a list of strings" in text
    assert any("'sandbox.filesystem.denyRead' must be a list of strings" in t for t in text)
    assert any("'bad host/path' is not a host pattern" in t for t in text)
    bad = write(home / "settings.json", {"sandbox": ["enabled"]})
    assert [str(e) for e in load_settings(project, user_home=home, trusted=True).errors] == [
        f"{bad}:2:3: 'sandbox' must be an object"
    ]


def test_unimplemented_claude_code_keys_warn_by_name(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(
        home / "settings.json",
        {
            "sandbox": {
                "enabled": True,
                "enableWeakerNestedSandbox": True,
                "network": {"httpProxyPort": 8080},
                "filesystem": {"allowRead": ["~"]},
                "bogus": 1,
            }
        },
    )
    problems = load_settings(project, user_home=home, trusted=True).problems
    assert all(p.severity is Severity.WARNING for p in problems)
    messages = sorted(p.message for p in problems)
    assert messages == [
        "'sandbox.enableWeakerNestedSandbox' is a Claude Code setting queryloop does not "
        "implement (ignored)",
        "'sandbox.filesystem.allowRead' is a Claude Code setting queryloop does not "
        "implement (ignored)",
        "'sandbox.network.httpProxyPort' is a Claude Code setting queryloop does not "
        "implement (ignored)",
        "unknown key 'sandbox.bogus' (ignored)",
    ]


def test_an_untrusted_project_can_only_tighten(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(
        home / "settings.json",
        {
            "sandbox": {
                "enabled": True,
                "autoAllowBashIfSandboxed": False,
                "network": {"allowedDomains": ["pypi.org"]},
            }
        },
    )
    write(
        project / ".queryloop/settings.json",
        {
            "sandbox": {
                "enabled": False,
                "failIfUnavailable": True,
                "autoAllowBashIfSandboxed": True,
                "excludedCommands": ["bash"],
                "filesystem": {"allowWrite": ["/"], "denyWrite": ["src"], "denyRead": ["~"]},
                "network": {"allowedDomains": ["evil.example"], "deniedDomains": ["pypi.org"]},
            }
        },
    )
    settings = load_settings(project, user_home=home, trusted=False)
    sandbox = settings.sandbox
    assert sandbox.enabled and sandbox.fail_if_unavailable and not sandbox.auto_allow
    assert sandbox.excluded_commands == () and sandbox.allow_write == ()
    assert sandbox.deny_write == (project / "src",) and sandbox.deny_read == (Path.home(),)
    assert sandbox.allowed_domains == ("pypi.org",) and sandbox.denied_domains == ("pypi.org",)
    ignored = "\n".join(settings.ignored)
    for what in (
        "sandbox.enabled false",
        "sandbox.autoAllowBashIfSandboxed true",
        "sandbox.excludedCommands bash",
        "sandbox.filesystem.allowWrite /",
        "sandbox.network.allowedDomains evil.example",
    ):
        assert what in ignored


def test_an_untrusted_project_turning_it_on_does_not_auto_allow(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(project / ".queryloop/settings.json", {"sandbox": {"enabled": True}})
    sandbox = load_settings(project, user_home=home, trusted=False).sandbox
    assert sandbox.enabled and not sandbox.auto_allow
    trusted = load_settings(project, user_home=home, trusted=True).sandbox
    assert trusted.enabled and trusted.auto_allow


def test_managed_domains_only(
    dirs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, home = dirs
    managed = write(
        tmp_path / "managed.json",
        {
            "sandbox": {
                "network": {"allowManagedDomainsOnly": True, "allowedDomains": ["corp.example"]}
            }
        },
    )
    monkeypatch.setenv("QUERYLOOP_MANAGED_SETTINGS", str(managed))
    write(
        home / "settings.json",
        {"sandbox": {"enabled": True, "network": {"allowedDomains": ["x.org"]}}},
    )
    sandbox = load_settings(project, user_home=home, trusted=True).sandbox
    assert sandbox.allowed_domains == ("corp.example",)


def test_unix_sockets_are_read_and_only_a_trusted_file_allows_them(
    dirs: tuple[Path, Path],
) -> None:
    project, home = dirs
    network = {"allowUnixSockets": ["~/agent.sock", "run/db.sock"], "allowAllUnixSockets": True}
    write(home / "settings.json", {"sandbox": {"network": network}})
    trusted = load_settings(project, user_home=home, trusted=True)
    assert trusted.problems == ()
    assert trusted.sandbox.allow_unix_sockets == (
        Path("~/agent.sock").expanduser(),
        home / "run" / "db.sock",
    )
    assert trusted.sandbox.allow_all_unix_sockets
    (home / "settings.json").unlink()
    write(project / ".queryloop" / "settings.json", {"sandbox": {"network": network}})
    untrusted = load_settings(project, user_home=home, trusted=False).sandbox
    assert untrusted.allow_unix_sockets == () and not untrusted.allow_all_unix_sockets
