"""The failed-authentication limit is exact under parallel guesses: with a limit of N,
N bad tokens get their 401 and every other one of a burst gets 429, however many arrive
at once (the count is taken first and decided on, as the rate limiter does)."""

from types import SimpleNamespace

import pytest
from rest_framework.test import APIClient

from messaging_project.api import auth_failures
from tests.contacts.test_contact_counter import on_postgresql, run_concurrently

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 5
GUESSES = 64


@pytest.fixture(autouse=True)
def one_window(monkeypatch):
    """The whole burst in one window, however slow the machine: the limit is per window."""
    monkeypatch.setattr(auth_failures, "time", SimpleNamespace(time=lambda: 1_800_000_000.0))


def guess(number: int) -> int:
    """One request with a well-formed token that does not exist (so it is looked up)."""
    client = APIClient(REMOTE_ADDR="203.0.113.9")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer wam_{number:012x}_" + "x" * 43)
    return client.get("/api/contacts").status_code


def burst() -> list[int]:
    return run_concurrently([lambda n=n: guess(n) for n in range(GUESSES)])


def test_parallel_bad_tokens_get_exactly_the_limit_of_401s(settings):
    settings.API_AUTH_FAILURE_LIMIT = LIMIT

    statuses = burst()

    assert sorted(statuses) == [401] * LIMIT + [429] * (GUESSES - LIMIT)


@on_postgresql
def test_parallel_bad_tokens_get_exactly_the_limit_of_401s_with_the_database_cache(settings):
    settings.API_AUTH_FAILURE_LIMIT = LIMIT
    settings.CACHES = {
        "default": {
            "BACKEND": "messaging_project.core.cache.AtomicDatabaseCache",
            "LOCATION": "django_cache",
        }
    }

    statuses = burst()

    assert sorted(statuses) == [401] * LIMIT + [429] * (GUESSES - LIMIT)
