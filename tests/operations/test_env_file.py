"""`manage.py write_env_file`: the production settings file, as the README writes it. Its
keys survive a shell's `set -a && .` and systemd alike, it is private, it never replaces
a file that holds keys, and `check --deploy --fail-level WARNING` passes on it as written."""

import os
import stat
import subprocess
import sys

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.tasks.processes import ROOT

DATABASE = "postgres://messaging:0a1b2c3d@127.0.0.1:5432/messaging"


def write(path, **options):
    options = {"host": "messaging.example.com", "database_url": DATABASE, **options}
    call_command("write_env_file", str(path), **options)
    return dict(
        line.split("=", 1)
        for line in path.read_text().splitlines()
        if line and not line.startswith("#")
    )


def test_the_file_is_private_and_holds_new_keys(tmp_path):
    first = write(tmp_path / "one.env")
    second = write(tmp_path / "two.env")

    assert stat.S_IMODE((tmp_path / "one.env").stat().st_mode) == 0o600
    for key in ("SECRET_KEY", "FIELD_ENCRYPTION_KEYS", "METRICS_TOKEN"):
        assert first[key] and first[key] != second[key]
    assert len(first["SECRET_KEY"]) >= 50
    assert first["DATABASE_URL"] == DATABASE
    assert first["ALLOWED_HOSTS"] == "messaging.example.com"
    assert first["CSRF_TRUSTED_ORIGINS"] == "https://messaging.example.com"
    assert (first["HTTPS"], first["SECURE_HSTS_PRELOAD"]) == ("true", "false")


def test_a_shell_reads_every_value_as_written(tmp_path):
    path = tmp_path / "messaging.env"
    written = write(path, redis_url="redis://127.0.0.1:6379/0")
    names = " ".join(written)
    shell = subprocess.run(
        ["bash", "-c", f'set -a && . {path} && for n in {names}; do echo "$n=${{!n}}"; done'],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ["PATH"]},
    )
    assert dict(line.split("=", 1) for line in shell.stdout.splitlines()) == written


def test_a_file_that_holds_settings_is_never_overwritten(tmp_path):
    path = tmp_path / "messaging.env"
    path.write_text("FIELD_ENCRYPTION_KEYS=the-only-copy\n")

    with pytest.raises(CommandError, match="already holds settings"):
        write(path)
    assert path.read_text() == "FIELD_ENCRYPTION_KEYS=the-only-copy\n"


def test_an_empty_file_made_beforehand_is_filled_and_made_private(tmp_path):
    path = tmp_path / "messaging.env"
    path.touch(mode=0o644)

    assert write(path)["SECRET_KEY"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    "options",
    [
        {"database_url": "postgres://messaging:p&ss@127.0.0.1/messaging"},
        {"database_url": "postgres://messaging:p$ss@127.0.0.1/messaging"},
        {"database_url": "mysql://x@127.0.0.1/messaging"},
        {"host": "messaging.example.com; rm -rf /"},
        {"redis_url": "redis://:a b@127.0.0.1:6379/0"},
    ],
)
def test_a_value_a_shell_would_misread_is_refused_and_nothing_written(tmp_path, options):
    path = tmp_path / "messaging.env"

    with pytest.raises(CommandError):
        write(path, **options)
    assert not path.exists()


@pytest.mark.slow  # manage.py subprocesses
def test_the_deploy_check_passes_on_the_file_as_written(tmp_path):
    path = tmp_path / "messaging.env"
    write(path, database_url=f"sqlite:///{tmp_path}/db.sqlite3")
    result = subprocess.run(
        [
            "bash",
            "-c",
            f"set -a && . {path} && {sys.executable} manage.py check --deploy --fail-level WARNING",
        ],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], "VAR_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
