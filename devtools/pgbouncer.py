"""A real PgBouncer on loopback, in transaction pooling mode, in front of a PostgreSQL:
for the tests of the service behind a pooler, and for CI, which runs the PostgreSQL
integration tests through one:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \\
        python -m devtools.pgbouncer -- make test PYTEST_ARGS="tests/tasks"

starts Debian's `pgbouncer` on a free port, runs the command with DATABASE_URL through
it, DATABASE_DIRECT_URL the original URL (the worker's LISTEN) and
DATABASE_POOLING=transaction, then stops it and exits with the command's status.

The configuration is written here, into a temporary directory, never by hand: every
database of the server under its own name (so the test runner's `test_<name>` works),
the URL's user and password in the auth file (PgBouncer logs in to the server with
them), no Unix socket, and as root (CI) PgBouncer drops to the `postgres` user.
"""

import argparse
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from devtools.loopback import HOST, free_port, wait_until_listening

# Where Debian installs it (/usr/sbin is not on every user's PATH).
CANDIDATES = ("pgbouncer", "/usr/sbin/pgbouncer", "/usr/bin/pgbouncer")


def executable() -> str | None:
    """The pgbouncer program, or None when it is not installed."""
    for candidate in CANDIDATES:
        found = shutil.which(candidate)
        if found:
            return found
    return None


def config(
    *,
    server_host: str,
    server_port: int,
    port: int,
    auth_file: Path,
    admin_user: str,
    pool_size: int = 20,
    run_as: str | None = None,
) -> str:
    """pgbouncer.ini: transaction pooling on 127.0.0.1:`port`, every database passed
    through to the server under its own name."""
    lines = [
        "[databases]",
        f"* = host={server_host} port={server_port}",
        "",
        "[pgbouncer]",
        f"listen_addr = {HOST}",
        f"listen_port = {port}",
        "unix_socket_dir =",
        "pool_mode = transaction",
        "auth_type = trust",
        f"auth_file = {auth_file}",
        f"admin_users = {admin_user}",
        # The test suite opens many clients (threads, worker processes), each waiting its
        # turn for one of the pool's server connections, as production clients would.
        "max_client_conn = 2000",
        f"default_pool_size = {pool_size}",
        "server_idle_timeout = 10",
    ]
    if run_as:
        lines.append(f"user = {run_as}")
    return "\n".join(lines) + "\n"


def auth_line(user: str, password: str) -> str:
    """A line of the auth file: both quoted, a quote doubled."""

    def quoted(text: str) -> str:
        return '"' + text.replace('"', '""') + '"'

    return f"{quoted(user)} {quoted(password)}\n"


def with_address(url: str, host: str, port: int) -> str:
    """`url` with another host and port (the user, password and database kept)."""
    parts = urlsplit(url)
    credentials = parts.netloc.rpartition("@")[0]
    netloc = f"{credentials}@{host}:{port}" if credentials else f"{host}:{port}"
    return urlunsplit(parts._replace(netloc=netloc))


def with_database(url: str, name: str) -> str:
    """`url` naming another database."""
    return urlunsplit(urlsplit(url)._replace(path="/" + quote(name)))


class PgBouncer:
    """`with PgBouncer(server_url) as pooler:` a PgBouncer in front of the server of
    `server_url` (a postgres:// URL), `pooler.url` the same URL through it."""

    def __init__(self, server_url: str, *, pool_size: int = 20, port: int | None = None) -> None:
        parts = urlsplit(server_url)
        self.server_url = server_url
        self.server_host = parts.hostname or HOST
        self.server_port = parts.port or 5432
        self.user = unquote(parts.username or "postgres")
        self.password = unquote(parts.password or "")
        self.pool_size = pool_size
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None
        self.directory: tempfile.TemporaryDirectory | None = None

    @property
    def url(self) -> str:
        return with_address(self.server_url, HOST, self.port)

    def start(self) -> "PgBouncer":
        program = executable()
        if program is None:
            raise RuntimeError("pgbouncer is not installed (Debian: apt-get install pgbouncer)")
        self.directory = tempfile.TemporaryDirectory(prefix="pgbouncer-")
        directory = Path(self.directory.name)
        run_as = None
        if os.geteuid() == 0:  # PgBouncer refuses to run as root
            run_as = "postgres" if user_exists("postgres") else "nobody"
            directory.chmod(0o755)
        auth_file = directory / "users.txt"
        auth_file.write_text(auth_line(self.user, self.password))
        ini = directory / "pgbouncer.ini"
        ini.write_text(
            config(
                server_host=self.server_host,
                server_port=self.server_port,
                port=self.port,
                auth_file=auth_file,
                admin_user=self.user,
                pool_size=self.pool_size,
                run_as=run_as,
            )
        )
        for path in (auth_file, ini):
            path.chmod(0o644)
        self.log = (directory / "pgbouncer.log").open("w")
        self.process = subprocess.Popen(
            [program, str(ini)], stdout=self.log, stderr=subprocess.STDOUT
        )
        if not wait_until_listening(self.port, timeout=10, process=self.process):
            self.stop()
            raise RuntimeError(f"pgbouncer did not start:\n{self.output()}")
        return self

    def output(self) -> str:
        if self.directory is None:
            return ""
        return (Path(self.directory.name) / "pgbouncer.log").read_text()

    def stop(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            self.process = None
            self.log.close()
        if self.directory is not None:
            self.directory.cleanup()
            self.directory = None

    def __enter__(self) -> "PgBouncer":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()


def user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m devtools.pgbouncer",
        description="Run COMMAND with DATABASE_URL going through a PgBouncer in "
        "transaction pooling mode, started on a free port and stopped afterwards.",
    )
    parser.add_argument("--pool-size", type=int, default=20)
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    server_url = os.environ.get("DATABASE_URL", "")
    if not command or not server_url.startswith(("postgres://", "postgresql://")):
        parser.error("give -- COMMAND, with DATABASE_URL set to a postgres:// URL")
    with PgBouncer(server_url, pool_size=args.pool_size) as pooler:
        print(f"== PgBouncer (transaction pooling) on {HOST}:{pooler.port}", flush=True)
        env = {
            **os.environ,
            "DATABASE_URL": pooler.url,
            "DATABASE_DIRECT_URL": server_url,
            "DATABASE_POOLING": "transaction",
        }
        return subprocess.run(command, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
