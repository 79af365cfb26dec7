"""The network of a sandbox with allowedDomains: only those hosts, through our proxy (plain
HTTP and CONNECT), and a refusal that says which setting admits a host."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest

from conftest import clean_env
from queryloop.sandbox import DomainFilter, Sandbox, SandboxPolicy
from queryloop.sandbox.bridge import BridgeKind, find_socat
from queryloop.tools.builtin._shell import run_shell


def _python(code: str) -> str:
    # the real interpreter: a venv under /tmp is out of sight in the sandbox
    return f"{shlex.quote(os.path.realpath(sys.executable))} -c {shlex.quote(code)}"


GET = """
import sys, urllib.request, urllib.error
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())
except urllib.error.HTTPError as exc:
    print(exc.code, exc.read().decode())
"""

TUNNEL = """
import http.client, sys
conn = http.client.HTTPConnection("127.0.0.1", 3128, timeout=10)
conn.set_tunnel(sys.argv[1], int(sys.argv[2]))
try:
    conn.request("GET", "/through-the-tunnel")
    print(conn.getresponse().read().decode())
except OSError as exc:
    print("tunnel refused:", exc)
"""


async def _run(sandbox: Sandbox, command: str, cwd: Path) -> str:
    got = await run_shell(command, cwd, clean_env(), 30, sandbox=sandbox, working_dirs=[cwd])
    return got.stdout + got.stderr


@pytest.mark.usefixtures("bwrap")
@pytest.mark.parametrize("bridge", ["socat", "python"])
async def test_an_allowed_host_goes_through_and_another_does_not(
    project: Path, http_server: int, bridge: BridgeKind
) -> None:
    if bridge == "socat" and find_socat() is None:
        pytest.skip("socat is not installed (./run test installs the Debian package)")
    sandbox = Sandbox(SandboxPolicy(allowed_domains=("localhost",)), bridge=bridge)
    try:
        allowed = await _run(sandbox, f"{_python(GET)} http://localhost:{http_server}/ok", project)
        assert f"served /ok for localhost:{http_server}" in allowed
        refused = await _run(sandbox, f"{_python(GET)} http://127.0.0.1:{http_server}/no", project)
        assert "served" not in refused and refused.startswith("403 ")
        assert f"127.0.0.1:{http_server} is not in sandbox.network.allowedDomains" in refused
        assert 'add "127.0.0.1" to sandbox.network.allowedDomains' in refused
        tunnel = await _run(sandbox, f"{_python(TUNNEL)} localhost {http_server}", project)
        assert "served /through-the-tunnel" in tunnel
        no_tunnel = await _run(sandbox, f"{_python(TUNNEL)} 127.0.0.1 {http_server}", project)
        assert "tunnel refused" in no_tunnel and "403" in no_tunnel and "served" not in no_tunnel
        # only the proxy: a direct connection to the host's server finds nothing
        direct = await _run(
            sandbox,
            f"env -u HTTP_PROXY -u http_proxy {_python(GET)} http://localhost:{http_server}/",
            project,
        )
        assert "served" not in direct
    finally:
        await sandbox.aclose()


@pytest.mark.usefixtures("bwrap")
async def test_the_socat_bridge_is_used_when_installed(project: Path, http_server: int) -> None:
    """socat, not an interpreter, serves the port inside (docs/sandbox.md: why socat), and
    the command is still the process bwrap waits for: its exit code and output come back."""
    if find_socat() is None:
        pytest.skip("socat is not installed (./run test installs the Debian package)")
    sandbox = Sandbox(SandboxPolicy(allowed_domains=("localhost",)))
    try:
        async with sandbox.launch(
            ["true"], command="true", cwd=project, env={}, working_dirs=[project]
        ) as launch:
            assert "TCP-LISTEN:3128,bind=127.0.0.1,fork,reuseaddr" in " ".join(launch.argv)
            assert os.path.realpath(sys.executable) not in launch.argv
        listing = "ls -l /proc/*/exe 2>/dev/null; exit 7"
        got = await run_shell(
            listing, project, clean_env(), 30, sandbox=sandbox, working_dirs=[project]
        )
        assert got.exit_code == 7 and "socat" in got.stdout
    finally:
        await sandbox.aclose()


@pytest.mark.usefixtures("bwrap")
async def test_denied_domains_win(project: Path, http_server: int) -> None:
    policy = SandboxPolicy(
        allowed_domains=("localhost",), denied_domains=(f"localhost:{http_server}",)
    )
    sandbox = Sandbox(policy)
    try:
        refused = await _run(sandbox, f"{_python(GET)} http://localhost:{http_server}/", project)
        assert refused.startswith("403 ") and "deniedDomains" in refused
    finally:
        await sandbox.aclose()


def test_patterns() -> None:
    domains = DomainFilter.of(["example.com", "*.github.com", "api.test:8443", "[::1]"])
    assert domains.admits("example.com", 443) and domains.admits("EXAMPLE.com.", 80)
    assert not domains.admits("sub.example.com", 443)
    assert domains.admits("api.github.com", 443) and domains.admits("a.b.github.com", 80)
    assert not domains.admits("github.com", 443) and not domains.admits("evilgithub.com", 443)
    assert domains.admits("api.test", 8443) and not domains.admits("api.test", 443)
    assert domains.admits("::1", 80)
