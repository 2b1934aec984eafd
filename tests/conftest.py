"""Fixtures: two organizations, each with a token and an authenticated API client."""

import pytest
from rest_framework.test import APIClient

from tests.factories import OrganizationFactory, issue_token

pytest_plugins = ["tests.channel"]


@pytest.fixture(autouse=True)
def local_memory_cache(settings):
    """Each test starts with fresh rate-limit counters. Query counts pinned in tests then
    count the application's queries, not the database cache's (tested on its own)."""
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "t"}
    }
    from django.core.cache import cache

    cache.clear()


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
