"""Production settings: `check --deploy` is clean, the admin sends its security headers,
and plain http keeps working locally when nothing is configured."""

import os
import secrets
import subprocess
import sys

import pytest
from cryptography.fernet import Fernet
from django.conf import settings
from django.db import connection
from django.test import Client

from tests.tasks.processes import database_url

PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "ALLOWED_HOSTS": "example.com",
    "HTTPS": "true",
    "SECURE_HSTS_PRELOAD": "true",
    "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
}


def deploy_check(tmp_path, **env):
    # SQLite unless a test names a database: the connection budget reads the server's.
    environment = {**os.environ, "VAR_DIR": str(tmp_path), "DATABASE_URL": "", **env}
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=settings.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow  # a manage.py subprocess
def test_the_deploy_check_passes_with_production_settings(tmp_path):
    result = deploy_check(tmp_path, **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.slow
def test_the_deploy_check_fails_without_https(tmp_path):
    result = deploy_check(tmp_path, **{**PRODUCTION, "HTTPS": "false"})
    assert result.returncode != 0
    assert "SECURE_SSL_REDIRECT" in result.stdout + result.stderr


@pytest.mark.slow
def test_the_deploy_check_fails_without_an_encryption_key(tmp_path):
    result = deploy_check(tmp_path, **{**PRODUCTION, "FIELD_ENCRYPTION_KEYS": ""})
    assert result.returncode != 0
    assert "base.E002" in result.stdout + result.stderr


@pytest.mark.slow
def test_a_malformed_encryption_key_stops_the_service(tmp_path):
    result = deploy_check(tmp_path, **{**PRODUCTION, "FIELD_ENCRYPTION_KEYS": "not-a-key"})
    assert result.returncode != 0
    assert "FIELD_ENCRYPTION_KEYS: key 1 is not a Fernet key" in result.stderr


@pytest.mark.slow
@pytest.mark.django_db
def test_the_deploy_check_warns_when_the_processes_exceed_the_servers_connections(tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("the connection budget is PostgreSQL's")
    # A thousand worker processes: more than any server here allows, whatever its setting.
    env = {**PRODUCTION, "DATABASE_URL": database_url(), "WORKER_PROCESSES": "1000"}
    env["DATABASE_DIRECT_URL"] = env["DATABASE_POOLING"] = ""
    result = deploy_check(tmp_path, **env)
    assert result.returncode != 0
    assert "worker.W001" in result.stderr + result.stdout
    assert "workers 1000 x (16 + 4) = 20000" in result.stderr + result.stdout


def test_the_health_checks_are_not_redirected_to_https(settings):
    settings.SECURE_SSL_REDIRECT = True
    assert Client().get("/health/live").status_code == 200
    assert Client().get("/api/me").status_code == 301


def test_local_defaults_serve_plain_http():
    assert not settings.SECURE_SSL_REDIRECT and not settings.SESSION_COOKIE_SECURE
    assert settings.SECURE_HSTS_SECONDS == 0


@pytest.mark.django_db
def test_admin_pages_carry_security_headers():
    response = Client().get("/admin/login/")
    assert response.status_code == 200
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy


@pytest.mark.django_db
def test_the_api_is_not_given_the_admin_policy(api):
    assert "Content-Security-Policy" not in api.get("/api/me")
