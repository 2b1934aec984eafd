"""`manage.py write_env_file PATH --host HOST --database-url URL`: the production settings
file, with new keys.

The file holds `KEY=value` lines that systemd's `EnvironmentFile=` and a shell's
`set -a && . PATH` both read as written, so every value is made only of characters
neither of them treats specially (no quotes, `$`, `&`, `;`, spaces, backslashes, `~`,
`#`): the keys are generated from URL-safe alphabets (Django's own secret key generator
uses `!@#$%^&*(-_=+)`, which a shell trips on), and a URL or host given with any other
character is refused with a message rather than written. The file is created with mode
0600; a file that already holds settings is never overwritten: its
FIELD_ENCRYPTION_KEYS are the only way to read the secrets stored with them.
"""

import os
import re
import secrets
from pathlib import Path

from cryptography.fernet import Fernet
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

# What a value may hold: safe unquoted in a shell assignment and in an EnvironmentFile.
SAFE_VALUE = re.compile(r"[A-Za-z0-9_.:/@%+,=?\[\]-]*")
HOST_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?")
DATABASE_SCHEMES = ("postgres://", "postgresql://", "sqlite://")


def secret_key() -> str:
    """67 characters of [A-Za-z0-9_-]: Django's deploy check wants 50 or more."""
    return secrets.token_urlsafe(50)


def production_settings(
    *,
    host: str,
    database_url: str,
    database_direct_url: str = "",
    redis_url: str = "",
) -> dict[str, str]:
    """Every setting the file holds, new keys included, in the order written."""
    values = {
        "DATABASE_URL": database_url,
        **(
            {"DATABASE_POOLING": "transaction", "DATABASE_DIRECT_URL": database_direct_url}
            if database_direct_url
            else {}
        ),
        **({"REDIS_URL": redis_url} if redis_url else {}),
        "SECRET_KEY": secret_key(),
        "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
        "METRICS_TOKEN": secrets.token_urlsafe(32),
        "ALLOWED_HOSTS": host,
        "CSRF_TRUSTED_ORIGINS": f"https://{host}",
        # Behind the nginx site of deploy/nginx/, on this machine.
        "HTTPS": "true",
        "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto",
        "TRUSTED_PROXIES": "127.0.0.1",
        # Preloading is hard to undo: an explicit no, which answers the deploy check's
        # reminder (security.W021); set it to true once you mean to submit the domain.
        "SECURE_HSTS_PRELOAD": "false",
    }
    for name, value in values.items():
        if not SAFE_VALUE.fullmatch(value):
            raise CommandError(
                f"{name} holds characters a shell or systemd would read specially: "
                f"{value!r}. Percent-encode them in a URL (a password: %21 for !, %26 for &, "
                "...), or use only letters, digits and _.:/@%+,=?[]-."
            )
    return values


def env_file_text(values: dict[str, str]) -> str:
    written = timezone.now().strftime("%Y-%m-%d %H:%M UTC")
    header = [
        f"# The service's settings, written by `manage.py write_env_file` on {written}.",
        "# KEY=value lines, no quotes: read by the systemd units (EnvironmentFile=) and by",
        "# `set -a && . /etc/messaging.env`. Every setting: docs/operations.md.",
        "# Keep FIELD_ENCRYPTION_KEYS in your secret store too: without it the secrets",
        '# stored in the database cannot be read (docs/operations.md, "Secrets at rest").',
    ]
    return "\n".join([*header, *(f"{name}={value}" for name, value in values.items())]) + "\n"


class Command(BaseCommand):
    help = (
        "Write the production settings file (mode 0600) with new keys: SECRET_KEY, "
        "FIELD_ENCRYPTION_KEYS and METRICS_TOKEN, and the settings of the nginx site of "
        "deploy/nginx/. Never overwrites a file that holds settings."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="where to write it, e.g. /etc/messaging.env")
        parser.add_argument("--host", required=True, help="the public host name")
        parser.add_argument(
            "--database-url", required=True, help="PostgreSQL, e.g. postgres://USER:PW@HOST/DB"
        )
        parser.add_argument(
            "--database-direct-url",
            default="",
            help="with --database-url through PgBouncer in transaction mode: PostgreSQL "
            "itself, for the worker's LISTEN (sets DATABASE_POOLING=transaction)",
        )
        parser.add_argument("--redis-url", default="", help="e.g. redis://127.0.0.1:6379/0")

    def handle(self, *args, path, host, database_url, database_direct_url, redis_url, **options):
        if not HOST_NAME.fullmatch(host):
            raise CommandError(f"--host must be a host name, not {host!r}.")
        for option, url in (
            ("--database-url", database_url),
            ("--database-direct-url", database_direct_url),
        ):
            if url and not url.startswith(DATABASE_SCHEMES):
                raise CommandError(f"{option} must be a postgres:// URL, not {url!r}.")
        values = production_settings(
            host=host,
            database_url=database_url,
            database_direct_url=database_direct_url,
            redis_url=redis_url,
        )
        target = Path(path)
        if target.exists() and target.stat().st_size > 0:
            raise CommandError(
                f"{target} already holds settings; it is left as it is (its "
                "FIELD_ENCRYPTION_KEYS read the secrets stored with them). Remove it first "
                "to start over."
            )
        # Created 0600 before anything is written into it; an empty file (`install -m
        # 0600 /dev/null PATH`) is reused with its mode set again.
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as env_file:
            os.fchmod(env_file.fileno(), 0o600)
            env_file.write(env_file_text(values))
        self.stdout.write(
            f"Wrote {target} (mode 0600) with new SECRET_KEY, FIELD_ENCRYPTION_KEYS and "
            "METRICS_TOKEN."
        )
