"""Fixtures the numbers' tests share with the inbound ones."""

from tests.inbound.conftest import webhook_org  # noqa: F401 (a fixture)
