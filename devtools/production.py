"""The README's production install, run in a scratch directory: CI's production step, and
for anyone who changes a deployment file (`python -m devtools.production`).

With DATABASE_URL naming a PostgreSQL (CI passes the one its suite ran on), the steps
are the README's, on a scratch database of that server made for the run and dropped
after it:

1. `manage.py write_env_file` writes the settings file; it must be mode 0600, and a
   shell's `set -a && .` must read every value in it exactly as written;
2. PgBouncer starts from deploy/pgbouncer.ini (devtools/pgbouncer.py: the shipped file,
   this machine's port and files replaced), its users file written as
   docs/operations.md writes it, and the settings file points the service at it;
3. with that file sourced as the README sources it: `migrate`, `collectstatic`,
   `createsuperuser` (its password from the environment instead of a prompt) and
   `check --deploy --fail-level WARNING`, which must find no issue;
4. `nginx -t` on deploy/nginx/bootstrap.conf (no certificate yet) and on
   deploy/nginx/messaging.conf (with a certificate made for the run).

Without PostgreSQL the service's database is SQLite in the scratch directory and
PgBouncer is skipped, and without nginx or pgbouncer installed their step is skipped;
each skip is said. Exits non-zero at the first step that fails, with its output.
"""

import datetime
import os
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from devtools.pgbouncer import PgBouncer, with_database
from devtools.pgbouncer import executable as pgbouncer_executable

ROOT = Path(__file__).resolve().parent.parent
HOST = "messaging.example.com"  # the README's and the nginx sites' placeholder
CERTIFICATES = f"/etc/letsencrypt/live/{HOST}/"
PYTHON = sys.executable


class StepFailed(Exception):
    pass


def say(text: str) -> None:
    print(f"== {text}", flush=True)


def run(command: list[str], *, env: dict[str, str], what: str) -> str:
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    if result.returncode != 0:
        raise StepFailed(f"{what} failed ({result.returncode}):\n{output}")
    return output


def sourced(env_file: Path, commands: str) -> list[str]:
    """`commands` run by bash with the settings file sourced, as the README runs them."""
    return ["bash", "-c", f"set -a && . {env_file} && {commands}"]


def clean_environment(scratch: Path) -> dict[str, str]:
    """Only what a root shell on a fresh machine has: the settings come from the file."""
    kept = {name: os.environ[name] for name in ("PATH", "HOME", "LANG") if name in os.environ}
    return {**kept, "VAR_DIR": str(scratch / "var")}


def write_env_file(env_file: Path, *, env: dict[str, str], database_url: str, direct: str):
    say("manage.py write_env_file")
    command = [PYTHON, "manage.py", "write_env_file", str(env_file), "--host", HOST]
    command += ["--database-url", database_url, "--redis-url", "redis://127.0.0.1:6379/0"]
    if direct:
        command += ["--database-direct-url", direct]
    run(command, env=env, what="write_env_file")
    mode = stat.S_IMODE(env_file.stat().st_mode)
    if mode != 0o600:
        raise StepFailed(f"{env_file} has mode {mode:o}, not 600")
    # Every value, read back by a shell as the README's `set -a && .` reads it.
    written = dict(
        line.split("=", 1)
        for line in env_file.read_text().splitlines()
        if line and not line.startswith("#")
    )
    names = " ".join(written)
    printed = run(
        sourced(env_file, f'for name in {names}; do printf "%s=%s\\n" "$name" "${{!name}}"; done'),
        env=env,
        what="sourcing the settings file",
    )
    read = dict(line.split("=", 1) for line in printed.splitlines())
    if read != written:
        changed = sorted(name for name in written if read.get(name) != written[name])
        raise StepFailed(f"a shell reads these settings differently: {changed}")


def install_and_check(env_file: Path, *, env: dict[str, str]) -> None:
    say("migrate, collectstatic, createsuperuser, check --deploy --fail-level WARNING")
    manage = f"{PYTHON} manage.py"
    run(
        sourced(
            env_file,
            f"{manage} migrate --noinput && {manage} collectstatic --noinput -v 0",
        ),
        env=env,
        what="migrate and collectstatic",
    )
    superuser = f"{manage} createsuperuser --username admin --email admin@{HOST} --noinput"
    run(
        sourced(env_file, superuser),
        env={**env, "DJANGO_SUPERUSER_PASSWORD": secrets.token_urlsafe(16)},
        what="createsuperuser",
    )
    output = run(
        sourced(env_file, f"{manage} check --deploy --fail-level WARNING"),
        env=env,
        what="check --deploy",
    )
    if "no issues" not in output:
        raise StepFailed(f"check --deploy found issues:\n{output}")
    print(output.strip(), flush=True)


def self_signed_certificate(directory: Path) -> None:
    """fullchain.pem and privkey.pem for the host, as certbot leaves them."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    directory.mkdir(parents=True)
    (directory / "fullchain.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (directory / "privkey.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def nginx_test(scratch: Path) -> None:
    nginx = shutil.which("nginx") or shutil.which("/usr/sbin/nginx")
    if nginx is None:
        say("no nginx; skipped nginx -t (Debian: apt-get install nginx)")
        return
    directory = scratch / "nginx"
    self_signed_certificate(directory / "certificate")
    for site in ("bootstrap.conf", "messaging.conf"):
        say(f"nginx -t on deploy/nginx/{site}")
        text = (ROOT / "deploy" / "nginx" / site).read_text()
        (directory / site).write_text(text.replace(CERTIFICATES, f"{directory}/certificate/"))
        main = directory / f"test-{site}"
        main.write_text(
            f"pid {directory}/nginx.pid;\n"
            f"error_log {directory}/error.log;\n"
            "events {}\n"
            f"http {{\n    access_log off;\n    include {directory / site};\n}}\n"
        )
        run(
            [nginx, "-t", "-q", "-e", str(directory / "error.log"), "-c", str(main)],
            env=dict(os.environ),
            what=f"nginx -t on {site}",
        )


def main() -> int:
    scratch = Path(tempfile.mkdtemp(prefix="production-"))
    env = clean_environment(scratch)
    env_file = scratch / "messaging.env"
    server_url = os.environ.get("DATABASE_URL", "")
    postgresql = server_url.startswith(("postgres://", "postgresql://"))
    database = f"production_check_{secrets.token_hex(4)}"
    try:
        if not postgresql:
            say("no DATABASE_URL naming a PostgreSQL: the database is SQLite, no PgBouncer")
            sqlite = f"sqlite:///{scratch}/db.sqlite3"
            write_env_file(env_file, env=env, database_url=sqlite, direct="")
            install_and_check(env_file, env=env)
        else:
            with psycopg.connect(maintenance(server_url), autocommit=True) as connection:
                connection.execute(f'CREATE DATABASE "{database}"')
            direct = with_database(server_url, database)
            if pgbouncer_executable() is None:
                say("no pgbouncer; the service connects to PostgreSQL itself")
                write_env_file(env_file, env=env, database_url=direct, direct="")
                install_and_check(env_file, env=env)
            else:
                with PgBouncer(direct) as pooler:
                    say(f"PgBouncer from deploy/pgbouncer.ini on port {pooler.port}")
                    write_env_file(env_file, env=env, database_url=pooler.url, direct=direct)
                    install_and_check(env_file, env=env)
        nginx_test(scratch)
    except StepFailed as failure:
        print(failure, file=sys.stderr, flush=True)
        return 1
    finally:
        if postgresql:
            drop(server_url, database)
        shutil.rmtree(scratch, ignore_errors=True)
    say("the production install works as written")
    return 0


def maintenance(server_url: str) -> str:
    """The server's maintenance database, where databases are made and dropped."""
    return with_database(server_url, "postgres")


def drop(server_url: str, database: str) -> None:
    with psycopg.connect(maintenance(server_url), autocommit=True) as connection:
        connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
            [database],
        )
        connection.execute(f'DROP DATABASE IF EXISTS "{database}"')


if __name__ == "__main__":
    sys.exit(main())
