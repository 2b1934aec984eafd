"""The README's production install, run in a scratch directory: CI's production step, and
for anyone who changes the README or a deployment file (`python -m devtools.production`).

It runs the commands of the README's "Production install" block themselves, read from
README.md (a line ending in a backslash joined with the next), in their order, with only
what is this machine's replaced: /etc/messaging.env and /etc/nginx/sites-available/ are
files of the scratch directory, `.venv/bin/python` is this interpreter, HOST is set as
the README asks its reader to, and `runuser -u postgres --` connects as DATABASE_URL's
user instead. Every command is either run or skipped with its reason (the machine's
setup: packages, the system user, the checkout, systemd, certbot); a command this
script does not know fails the run, so the README cannot grow a step CI never ran.

With DATABASE_URL naming a PostgreSQL (CI passes the one its suite ran on):

1. the README's role and database are made on that server, under a scratch name
   (dropped after the run), with the password the README's own command generates;
2. PgBouncer starts from deploy/pgbouncer.ini (devtools/pgbouncer.py: the shipped file,
   this machine's port and files replaced) with that role in its users file, and the
   README's `write_env_file` points the service at it (`--database-direct-url` added,
   as docs/operations.md adds it);
3. the settings file must be mode 0600 and read by a shell's `set -a && .` exactly as
   written; `migrate`, `collectstatic` and `check --deploy --fail-level WARNING` run as
   the README runs them, and the check must find no issue;
4. `nginx -t` on each site the README installs (its host name put in by the README's
   own `sed`): a site installed before certbot's step without any certificate, the
   later one with a certificate made at that step for the run; certbot's webroot
   must be the directory both sites serve the challenge from, and its renewals must
   reload nginx;
5. `createsuperuser` as the README runs it, its password from the environment.

Without PostgreSQL the database is SQLite in the scratch directory and the role, the
database and PgBouncer are skipped; without nginx or pgbouncer installed their step is
skipped. Each skip is said. Exits non-zero at the first step that fails, with its output.
"""

import contextlib
import datetime
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import psycopg
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from devtools.pgbouncer import PgBouncer, with_database
from devtools.pgbouncer import executable as pgbouncer_executable

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PLACEHOLDER = "messaging.example.com"  # the nginx sites' host name, which the README's sed replaces
HOST = "production-check.example.org"  # what the reader sets HOST to
ENV_FILE = "/etc/messaging.env"
SITE = "/etc/nginx/sites-available/messaging"
CERTIFICATES = "/etc/letsencrypt/live/"
PYTHON = sys.executable

# Commands the run leaves out, by how they start, and why.
SKIPPED = {
    "HOST=": f"HOST is set to {HOST}",
    "REPOSITORY=": "the checkout is this one",
    "apt-get ": "the packages are this machine's (.ci/run installs what CI needs)",
    "useradd ": "the units' user: nothing runs under systemd here",
    "git clone ": "the checkout is this one",
    "python3 -m venv ": "the virtualenv is this one",
    "install -d ": "var/ is the scratch directory (VAR_DIR)",
    "install -m 0644 deploy/systemd/": "the units are checked by systemd-analyze (.ci/run)",
    "systemctl ": "nothing is started for good",
    "ln -sf ": "nginx -t reads the site where the README's sed wrote it",
    "certbot ": "a certificate made for the run stands in for Let's Encrypt's",
}


class StepFailed(Exception):
    pass


def readme_commands(readme: Path = README) -> list[str]:
    """The commands of the README's production install, in order: the lines of its `sh`
    block, a line ending in a backslash joined with the next as a shell joins them,
    comments and blank lines left out."""
    section = readme.read_text().split("## Production install", 1)[-1]
    match = re.search(r"^```sh\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    if match is None:
        raise StepFailed(f"{readme.name} has no sh block under 'Production install'")
    commands: list[str] = []
    current = ""
    for line in match.group(1).splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current += line
        if line.endswith("\\"):
            current += "\n"
            continue
        commands.append(current)
        current = ""
    return commands


@dataclass(frozen=True)
class Step:
    kind: str  # "skip", or the method of Install that runs the command
    command: str
    why: str = ""


def plan(commands: list[str]) -> list[Step]:
    """What the run does with each command, after checking what holds the commands
    together: the settings' database URL names the role and database the README made,
    with their password, and certbot gets the challenge from where the sites serve it
    and reloads nginx after each renewal. A command of no known kind fails."""
    steps = []
    role = database = None
    for command in commands:
        skipped = next((why for start, why in SKIPPED.items() if command.startswith(start)), None)
        if command.startswith("certbot "):
            check_certbot(command)
        if skipped is not None:
            steps.append(Step("skip", command, skipped))
        elif command.startswith("DB_PASSWORD=$("):
            steps.append(Step("password", command))
        elif command.startswith("runuser -u postgres -- "):
            found = re.search(r"CREATE ROLE (\w+) LOGIN PASSWORD '\$DB_PASSWORD'", command)
            role = found.group(1) if found else role
            found = re.search(r"createdb --owner (\w+) (\w+)$", command)
            database = found.group(2) if found else database
            steps.append(Step("postgres", command))
        elif re.match(r"\.venv/bin/python manage\.py write_env_file ", command):
            check_database_url(command, role=role, database=database)
            steps.append(Step("write_env_file", command))
        elif command.startswith(f"(set -a && . {ENV_FILE} && "):
            steps.append(Step("sourced", command))
        elif re.match(r'sed "s/messaging\.example\.com/\$HOST/g" deploy/nginx/\S+ \\\n', command):
            steps.append(Step("write_site", command))
        elif command.startswith("nginx -t"):
            steps.append(Step("nginx_test", command))
        else:
            raise StepFailed(
                f"README.md's production install has a command devtools/production.py "
                f"does not know; run it or skip it there:\n{command}"
            )
    return steps


def check_database_url(command: str, *, role: str | None, database: str | None) -> None:
    found = re.search(r'--database-url "([^"]*)"', command)
    if found is None:
        raise StepFailed(f"write_env_file without a quoted --database-url:\n{command}")
    url = urlsplit(found.group(1))
    given = (url.username, url.password, url.path.lstrip("/"))
    if given != (role, "$DB_PASSWORD", database):
        raise StepFailed(
            f"the settings' --database-url {found.group(1)} does not name the role "
            f"({role}), its password ($DB_PASSWORD) and the database ({database}) the "
            "README makes"
        )


def check_certbot(command: str) -> None:
    webroot = re.search(r"--webroot -w (\S+)", command)
    for site in ("bootstrap.conf", "messaging.conf"):
        text = (ROOT / "deploy" / "nginx" / site).read_text()
        served = re.search(r"location /\.well-known/acme-challenge/ \{\s*root ([^;]+);", text)
        if webroot is None or served is None or served.group(1) != webroot.group(1):
            raise StepFailed(
                f"certbot's webroot is not where deploy/nginx/{site} serves the challenge "
                f"from:\n{command}"
            )
    if not re.search(r'--deploy-hook "[^"]*reload nginx', command):
        raise StepFailed(f"certbot's renewals would not reload nginx:\n{command}")


def say(text: str) -> None:
    print(f"== {text}", flush=True)


def run(command: list[str], *, env: dict[str, str], what: str) -> str:
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    if result.returncode != 0:
        raise StepFailed(f"{what} failed ({result.returncode}):\n{output}")
    return output


def replaced(command: str, replacements: dict[str, str]) -> str:
    """`command` with each text replaced, every one of which must be in it."""
    for old, new in replacements.items():
        if old not in command:
            raise StepFailed(f"expected {old!r} in the README's command:\n{command}")
        command = command.replace(old, new)
    return command


def clean_environment(scratch: Path) -> dict[str, str]:
    """Only what a root shell on a fresh machine has, and the README's HOST."""
    kept = {name: os.environ[name] for name in ("PATH", "HOME", "LANG") if name in os.environ}
    return {**kept, "VAR_DIR": str(scratch / "var"), "HOST": HOST}


@dataclass
class Database:
    """The server DATABASE_URL names, where the README's role and database are made
    under `name`."""

    server_url: str
    name: str

    def client_environment(self) -> dict[str, str]:
        parts = urlsplit(self.server_url)
        return {
            "PGHOST": parts.hostname or "127.0.0.1",
            "PGPORT": str(parts.port or 5432),
            "PGUSER": unquote(parts.username or "postgres"),
            **({"PGPASSWORD": unquote(parts.password)} if parts.password else {}),
        }

    def direct_url(self, password: str) -> str:
        parts = urlsplit(self.server_url)
        netloc = f"{self.name}:{password}@{parts.hostname or '127.0.0.1'}:{parts.port or 5432}"
        return with_database(parts._replace(netloc=netloc).geturl(), self.name)

    def drop(self) -> None:
        with psycopg.connect(with_database(self.server_url, "postgres"), autocommit=True) as db:
            db.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                [self.name],
            )
            db.execute(f'DROP DATABASE IF EXISTS "{self.name}"')
            db.execute(f'DROP ROLE IF EXISTS "{self.name}"')


class Install:
    """The README's commands, run one by one in the scratch directory."""

    def __init__(self, scratch: Path, database: Database | None, stack: contextlib.ExitStack):
        self.scratch = scratch
        self.database = database
        self.stack = stack
        self.env = clean_environment(scratch)
        self.env_path = scratch / "messaging.env"
        self.site_path = scratch / "nginx" / "messaging"
        self.certificate = scratch / "nginx" / "certificate"
        self.nginx = shutil.which("nginx") or shutil.which("/usr/sbin/nginx")

    def local(self, command: str) -> str:
        """The README's command with this machine's paths."""
        return command.replace(ENV_FILE, str(self.env_path)).replace(".venv/bin/python", PYTHON)

    def bash(self, command: str, *, what: str, env: dict[str, str] | None = None) -> str:
        return run(["bash", "-c", command], env={**self.env, **(env or {})}, what=what)

    def do(self, step: Step) -> None:
        if step.kind == "skip":
            say(f"skipped: {step.command.splitlines()[0]}\n   ({step.why})")
            if step.command.startswith("certbot "):
                self_signed_certificate(self.certificate)
            return
        say(step.command.splitlines()[0] + (" ..." if "\n" in step.command else ""))
        getattr(self, step.kind)(step.command)

    def password(self, command: str) -> None:
        self.env["DB_PASSWORD"] = self.bash(
            f'{command} && printf %s "$DB_PASSWORD"', what="the database password"
        ).strip()

    def postgres(self, command: str) -> None:
        if self.database is None:
            say("skipped: no PostgreSQL, the service's database is SQLite")
            return
        if shutil.which("psql") is None or shutil.which("createdb") is None:
            raise StepFailed(
                "the README's role and database need psql and createdb "
                "(Debian: apt-get install postgresql-client)"
            )
        command = re.sub(r"\bmessaging\b", self.database.name, command)
        command = replaced(command, {"runuser -u postgres -- ": ""})
        self.bash(command, what="the role and database", env=self.database.client_environment())

    def write_env_file(self, command: str) -> None:
        service_url = f"sqlite:///{self.scratch}/db.sqlite3"
        direct = ""
        if self.database is not None:
            service_url = direct = self.database.direct_url(self.env["DB_PASSWORD"])
            if pgbouncer_executable() is None:
                say("no pgbouncer; the service connects to PostgreSQL itself")
                direct = ""
            else:
                pooler = self.stack.enter_context(PgBouncer(direct))
                say(f"PgBouncer from deploy/pgbouncer.ini on port {pooler.port}")
                service_url = pooler.url
        database = f'--database-url "{service_url}"'
        if direct:
            database += f' --database-direct-url "{direct}"'
        command = re.sub(r'--database-url "[^"]*"', lambda _: database, self.local(command))
        self.bash(command, what="write_env_file")
        check_env_file(self.env_path, self.bash)

    def sourced(self, command: str) -> None:
        extra = {}
        if "manage.py createsuperuser" in command:
            # The README's prompt for the password, answered by the environment instead.
            prompt = "manage.py createsuperuser"
            command = replaced(command, {prompt: f"{prompt} --noinput"})
            extra["DJANGO_SUPERUSER_PASSWORD"] = secrets.token_urlsafe(16)
        output = self.bash(self.local(command), what="the sourced commands", env=extra)
        if "check --deploy" in command:
            if "no issues" not in output:
                raise StepFailed(f"check --deploy found issues:\n{output}")
            print(output.strip().splitlines()[-1], flush=True)

    def write_site(self, command: str) -> None:
        self.site_path.parent.mkdir(exist_ok=True)
        self.bash(replaced(command, {SITE: str(self.site_path)}), what="writing the nginx site")
        text = self.site_path.read_text()
        if PLACEHOLDER in text or HOST not in text:
            raise StepFailed(f"the README's sed left the site without the host name:\n{text}")
        # Where certbot's step puts the certificate: a site written before it must pass
        # nginx -t without one.
        self.site_path.write_text(text.replace(f"{CERTIFICATES}{HOST}/", f"{self.certificate}/"))

    def nginx_test(self, command: str) -> None:
        if self.nginx is None:
            say("skipped: no nginx (Debian: apt-get install nginx)")
            return
        directory = self.site_path.parent
        main = directory / "nginx.conf"
        main.write_text(
            f"pid {directory}/nginx.pid;\n"
            f"error_log {directory}/error.log;\n"
            "events {}\n"
            f"http {{\n    access_log off;\n    include {self.site_path};\n}}\n"
        )
        run(
            [self.nginx, "-t", "-q", "-e", str(directory / "error.log"), "-c", str(main)],
            env=dict(os.environ),
            what="nginx -t",
        )


def check_env_file(env_file: Path, bash) -> None:
    """Mode 0600, and every value read back by a shell's `set -a && .` as written."""
    mode = stat.S_IMODE(env_file.stat().st_mode)
    if mode != 0o600:
        raise StepFailed(f"{env_file} has mode {mode:o}, not 600")
    written = dict(
        line.split("=", 1)
        for line in env_file.read_text().splitlines()
        if line and not line.startswith("#")
    )
    names = " ".join(written)
    printed = bash(
        f"set -a && . {env_file} && "
        f'for name in {names}; do printf "%s=%s\\n" "$name" "${{!name}}"; done',
        what="sourcing the settings file",
    )
    read = dict(line.split("=", 1) for line in printed.splitlines())
    if read != written:
        changed = sorted(name for name in written if read.get(name) != written[name])
        raise StepFailed(f"a shell reads these settings differently: {changed}")


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


def main() -> int:
    scratch = Path(tempfile.mkdtemp(prefix="production-"))
    server_url = os.environ.get("DATABASE_URL", "")
    database = None
    if server_url.startswith(("postgres://", "postgresql://")):
        database = Database(server_url, f"production_check_{secrets.token_hex(4)}")
    else:
        say("no DATABASE_URL naming a PostgreSQL: the database is SQLite, no PgBouncer")
    try:
        with contextlib.ExitStack() as stack:
            install = Install(scratch, database, stack)
            for step in plan(readme_commands()):
                install.do(step)
    except StepFailed as failure:
        print(failure, file=sys.stderr, flush=True)
        return 1
    finally:
        if database is not None:
            database.drop()
        shutil.rmtree(scratch, ignore_errors=True)
    say("the README's production install works as written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
