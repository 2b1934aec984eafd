"""Fixtures: two organizations, each with a token and an authenticated API client."""

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.db.backends.base.creation import TEST_DATABASE_PREFIX
from pytest_django.fixtures import validate_django_db
from rest_framework.test import APIClient

from tests.factories import OrganizationFactory, issue_token

pytest_plugins = ["tests.channel"]


# The fixtures that make a test's database work commit: pytest-django's own reading
# (its ordering of transactional tests last), with `django_db(transaction=True)`.
COMMITTING_FIXTURES = frozenset({"transactional_db", "live_server"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks `pooled` the tests whose database work commits: a pooler in transaction mode
    hands each transaction its own server connection, which a test run inside one
    transaction (a plain `django_db`) never sees. CI runs these through PgBouncer."""
    for item in items:
        marker = item.get_closest_marker("django_db")
        transaction = marker is not None and validate_django_db(marker)[0]
        if transaction or COMMITTING_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.pooled)


@pytest.fixture(scope="session", autouse=True)
def direct_url_names_the_test_database():
    """Behind a pooler, DATABASE_DIRECT_URL names the database the tests' own is made
    from: the worker's LISTEN must reach the test database, as the pooled URL does."""
    if settings.DATABASE_DIRECT is not None:
        test_name = connection.settings_dict["TEST"]["NAME"]
        settings.DATABASE_DIRECT["NAME"] = test_name or (
            TEST_DATABASE_PREFIX + settings.DATABASE_DIRECT["NAME"]
        )


if settings.DATABASE_POOLING == "transaction":

    @pytest.fixture(scope="session", autouse=True)
    def pooled_test_database_can_be_dropped(django_db_setup, django_db_blocker):
        """A pooler keeps its server connections to the test database open after the
        tests, and PostgreSQL drops no database in use: end them before pytest-django
        drops it (from the server's maintenance database, as Django does)."""
        yield
        name = connection.settings_dict["NAME"]
        connection.close()
        with django_db_blocker.unblock(), connection._nodb_cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                [name],
            )


@pytest.fixture(scope="session")
def migrated_database_in(tmp_path_factory) -> Callable[[Path], None]:
    """For the tests that run the service in other processes (gunicorn, honcho,
    `manage.py`): `migrated_database_in(var_dir)` puts a migrated SQLite database where a
    process started with VAR_DIR=var_dir uses it. `migrate` renders every migration's
    models, about 20 s on a slow machine: the suite migrates once and copies."""
    template_dir = tmp_path_factory.mktemp("migrated")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DATABASE_")},
        "VAR_DIR": str(template_dir),
        "REDIS_URL": "",
        "SECRET_KEY": "migrated-template",
    }
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=Path(__file__).resolve().parents[1],
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )

    def place(var_dir: Path) -> None:
        shutil.copyfile(template_dir / "db.sqlite3", var_dir / "db.sqlite3")

    return place


@pytest.fixture(autouse=True)
def sandbox_statuses_off(settings):
    """The sandbox's status webhooks (inbound/tasks.py) are played only by the tests that
    turn them on (tests/inbound/test_sandbox.py): elsewhere a sandbox send's chat stays
    `accepted` and the tasks written are the send's own."""
    settings.SANDBOX_STATUS_DELAYS = []


@pytest.fixture(autouse=True)
def local_memory_cache(settings):
    """Each test starts with fresh rate-limit counters. Query counts pinned in tests then
    count the application's queries, not the database cache's (tested on its own)."""
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "t"}
    }
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def stored_files_in_a_temporary_folder(settings, tmp_path):
    """Files a test stores (contacts imports, media) go to its own folder, not var/."""
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def org_a(db):
    return OrganizationFactory(name="Organization A")


@pytest.fixture
def org_b(db):
    return OrganizationFactory(name="Organization B")


def client_for(organization) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issue_token(organization)}")
    client.organization = organization
    return client


@pytest.fixture
def api(org_a) -> APIClient:
    """An API client authenticated as organization A."""
    return client_for(org_a)


@pytest.fixture
def api_b(org_b) -> APIClient:
    """An API client authenticated as organization B."""
    return client_for(org_b)


@pytest.fixture
def racing_org(transactional_db):
    """An organization for tests of concurrent requests, whose rate limit is out of reach."""
    return OrganizationFactory(name="Racing organization", rate_limit=1_000_000)
