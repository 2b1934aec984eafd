"""A real PgBouncer on loopback, in transaction pooling mode, in front of a PostgreSQL:
for the tests of the service behind a pooler, and for CI, which runs the PostgreSQL
integration tests through one:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \\
        python -m devtools.pgbouncer -- make test PYTEST_ARGS="tests/tasks"

starts Debian's `pgbouncer` on a free port, runs the command with DATABASE_URL through
it, DATABASE_DIRECT_URL the original URL (the worker's LISTEN) and
DATABASE_POOLING=transaction, then stops it and exits with the command's status.

The configuration is the shipped one, deploy/pgbouncer.ini (what production runs), with
only what is this machine's replaced, never edited by hand: the listening port, the
pid, log and users files (in a temporary directory), every database of the server
under its own name (so the test runner's `test_<name>` works), and as root (CI) the
`postgres` user PgBouncer drops to. Clients log in with the shipped `auth_type`: the
users file holds the URL's user and password (a generated one when the URL has none),
and PgBouncer logs in to the server with them.
"""

import argparse
import os
import pwd
import secrets
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


SHIPPED = Path(__file__).resolve().parent.parent / "deploy" / "pgbouncer.ini"


def config(
    *,
    server_host: str,
    server_port: int,
    port: int,
    directory: Path,
    admin_user: str,
    pool_size: int = 20,
    run_as: str | None = None,
    shipped: Path = SHIPPED,
) -> str:
    """deploy/pgbouncer.ini with this machine's port, files and databases: transaction
    pooling on 127.0.0.1:`port`, every database passed through to the server under its
    own name, the pid, log and users files in `directory`."""
    settings = {
        "listen_addr": HOST,
        "listen_port": str(port),
        # No socket file to collide with another PgBouncer's (or PostgreSQL's).
        "unix_socket_dir": "",
        "pidfile": str(directory / "pgbouncer.pid"),
        "logfile": str(directory / "pgbouncer.log"),
        "auth_file": str(directory / "users.txt"),
        "admin_users": admin_user,
        # The test suite opens many clients (threads, worker processes), each waiting its
        # turn for one of the pool's server connections, as production clients would.
        "max_client_conn": "2000",
        "default_pool_size": str(pool_size),
        "server_idle_timeout": "10",
        **({"user": run_as} if run_as else {}),
    }
    databases = [f"* = host={server_host} port={server_port}"]
    return with_settings(shipped.read_text(), settings, databases)


def with_settings(ini: str, settings: dict[str, str], databases: list[str]) -> str:
    """`ini` with the given [pgbouncer] settings' values replaced (those it lacks added at
    the end of the section) and its [databases] entries replaced by `databases`."""
    lines: list[str] = []
    section = ""
    missing = dict(settings)
    for line in ini.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            if section == "pgbouncer":
                lines += [f"{key} = {value}" for key, value in missing.items()]
                missing = {}
            section = stripped.strip("[]").strip()
            lines.append(line)
            if section == "databases":
                lines += databases
            continue
        key = stripped.partition("=")[0].strip()
        if section == "databases" and stripped and not stripped.startswith((";", "#")):
            continue  # the shipped database entries, replaced above
        if section == "pgbouncer" and key in missing:
            lines.append(f"{key} = {missing.pop(key)}")
            continue
        lines.append(line)
    if section == "pgbouncer":
        lines += [f"{key} = {value}" for key, value in missing.items()]
    return "\n".join(lines) + "\n"


def auth_line(user: str, password: str) -> str:
    """A line of the auth file: both quoted, a quote doubled."""

    def quoted(text: str) -> str:
        return '"' + text.replace('"', '""') + '"'

    return f"{quoted(user)} {quoted(password)}\n"


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
        # The pooler asks every client for a password (deploy/pgbouncer.ini's auth_type):
        # the URL's, or one made up when the server trusts a user who gives none.
        self.password = unquote(parts.password or "") or secrets.token_hex(16)
        self.pool_size = pool_size
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None
        self.directory: tempfile.TemporaryDirectory | None = None

    @property
    def url(self) -> str:
        parts = urlsplit(self.server_url)
        credentials = f"{quote(self.user, safe='')}:{quote(self.password, safe='')}"
        netloc = f"{credentials}@{HOST}:{self.port}"
        return urlunsplit(parts._replace(netloc=netloc))

    def start(self) -> "PgBouncer":
        program = executable()
        if program is None:
            raise RuntimeError("pgbouncer is not installed (Debian: apt-get install pgbouncer)")
        self.directory = tempfile.TemporaryDirectory(prefix="pgbouncer-")
        directory = Path(self.directory.name)
        run_as = None
        if os.geteuid() == 0:  # PgBouncer refuses to run as root
            run_as = "postgres" if user_exists("postgres") else "nobody"
            # Its pid and log files are written there as that user.
            account = pwd.getpwnam(run_as)
            os.chown(directory, account.pw_uid, account.pw_gid)
        auth_file = directory / "users.txt"
        auth_file.write_text(auth_line(self.user, self.password))
        ini = directory / "pgbouncer.ini"
        ini.write_text(
            config(
                server_host=self.server_host,
                server_port=self.server_port,
                port=self.port,
                directory=directory,
                admin_user=self.user,
                pool_size=self.pool_size,
                run_as=run_as,
            )
        )
        for path in (auth_file, ini):
            path.chmod(0o644)
        # What it says before its log file is open (a refused configuration) comes here.
        self.log = (directory / "pgbouncer.out").open("w")
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
        directory = Path(self.directory.name)
        return "".join(
            (directory / name).read_text()
            for name in ("pgbouncer.out", "pgbouncer.log")
            if (directory / name).exists()
        )

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
