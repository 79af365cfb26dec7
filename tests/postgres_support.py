"""A private PostgreSQL cluster for the tests: `initdb` into a temporary folder, `postgres` on
a free loopback port, stopped at the end.

`./run test` installs Debian's `postgresql` (the binaries are under
/usr/lib/postgresql/<version>/bin; no system cluster is used). PostgreSQL refuses to run as
root, so as root the cluster's folder belongs to `nobody` and its programs run as that user.
One cluster per pytest-xdist worker (the fixture in tests/conftest.py is session-scoped);
each test gets its own table (`postgres_store`) or database (`postgres_database`).

fsync stays on: the kill -9 tests kill writers, and an entry must be on disk (not only in the
server's memory) when `append` returns. initdb runs with `--no-sync` (the cluster's template
files need not reach the disk; only what the tests write does).
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SUPERUSER = "postgres"
PASSWORD = "queryloop-test-secret"
"""The superuser's password: the tests' DSNs carry one, so that error messages are seen to
leave it out."""
UNPRIVILEGED = "nobody"
START_TIMEOUT_S = 60.0


class PostgresUnavailable(Exception):
    """The PostgreSQL binaries are not on this machine (the message says what to install)."""


@dataclass(frozen=True)
class PostgresCluster:
    """A running private cluster."""

    folder: Path
    port: int
    process: subprocess.Popen[bytes]

    def dsn(self, database: str = SUPERUSER) -> str:
        """A URL for `database` as the superuser, with its password, over TCP on 127.0.0.1."""
        return f"postgresql://{SUPERUSER}:{PASSWORD}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new, empty database; its DSN."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.dsn(name)

    def terminate_backends(self, database: str | None = None) -> int:
        """Cut every other client connection (to `database`, or all): the server side of a
        dropped connection. How many were cut."""
        import psycopg

        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' "
                "AND (%s::text IS NULL OR datname = %s)",
                (database, database),
            ).fetchall()
        return sum(1 for (cut,) in rows if cut)


def postgres_bin() -> Path:
    """The folder of the newest PostgreSQL server binaries on this machine."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/postgres"),
        key=lambda p: _version(p.parent.parent.name),
    )
    if found:
        return found[-1].parent
    on_path = shutil.which("postgres")
    if on_path and shutil.which("initdb"):
        return Path(on_path).resolve().parent
    raise PostgresUnavailable(
        "no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/postgres); `./run test` "
        "installs Debian's postgresql when run as root (apt-get install postgresql)"
    )


def _version(name: str) -> tuple[int, ...]:
    return tuple(int(p) for p in name.split(".") if p.isdigit())


@contextmanager
def private_cluster() -> Iterator[PostgresCluster]:
    """Start a cluster in a new temporary folder; stop it and remove the folder on exit."""
    bin_dir = postgres_bin()
    # Not under pytest's tmp_path: its folders are private to root, and the server may run
    # as another user, who must reach its data folder.
    folder = Path(tempfile.mkdtemp(prefix="queryloop-pg-"))
    try:
        user = _run_as()
        if user is not None:
            os.chown(folder, user.pw_uid, user.pw_gid)
        (folder / "pwfile").write_text(PASSWORD, encoding="utf-8")
        if user is not None:
            os.chown(folder / "pwfile", user.pw_uid, user.pw_gid)
        _check(
            [
                str(bin_dir / "initdb"),
                *("-D", str(folder / "data"), "-U", SUPERUSER, "--pwfile", str(folder / "pwfile")),
                *("-A", "scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"),
            ],
            user,
        )
        with _server(bin_dir, folder, user) as cluster:
            yield cluster
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def _server(
    bin_dir: Path, folder: Path, user: pwd.struct_passwd | None
) -> Iterator[PostgresCluster]:
    for _attempt in range(3):  # a free port may be taken between choosing and binding it
        port = _free_port()
        log = folder / f"server-{port}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [
                    str(bin_dir / "postgres"),
                    *("-D", str(folder / "data"), "-p", str(port), "-k", str(folder)),
                    *("-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                **_user_kwargs(user),
            )
        cluster = PostgresCluster(folder=folder, port=port, process=process)
        try:
            if _wait_ready(cluster):
                yield cluster
                return
        finally:
            _stop(process)
        if "could not bind" not in log.read_text(errors="replace"):
            break
    raise RuntimeError(f"PostgreSQL did not start: {log.read_text(errors='replace')[-2000:]}")


def _wait_ready(cluster: PostgresCluster) -> bool:
    import psycopg

    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if cluster.process.poll() is not None:
            return False
        try:
            psycopg.connect(cluster.dsn(), connect_timeout=2).close()
            return True
        except psycopg.OperationalError:
            time.sleep(0.05)
    return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Immediate shutdown (SIGQUIT): the cluster is thrown away."""
    if process.poll() is None:
        process.send_signal(3)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _run_as() -> pwd.struct_passwd | None:
    """The unprivileged user to run the server as when we are root; None otherwise."""
    if os.geteuid() != 0:
        return None
    return pwd.getpwnam(UNPRIVILEGED)


def _user_kwargs(user: pwd.struct_passwd | None) -> dict[str, Any]:
    if user is None:
        return {}
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": [], "cwd": "/"}


def _check(argv: list[str], user: pwd.struct_passwd | None) -> None:
    done = subprocess.run(argv, capture_output=True, check=False, **_user_kwargs(user))
    if done.returncode != 0:
        output = (done.stdout + done.stderr).decode(errors="replace")
        raise RuntimeError(f"{Path(argv[0]).name} failed ({done.returncode}): {output[-2000:]}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
