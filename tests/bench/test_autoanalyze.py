"""The bench's stand-in for autovacuum's ANALYZE on a server where autovacuum is off."""

import time

import psycopg
import pytest
from django.db import connection

from bench import autoanalyze
from contacts.models import Contact
from tests.databases import on_postgresql
from tests.factories import OrganizationFactory

pytestmark = [on_postgresql, pytest.mark.django_db(transaction=True)]


def conninfo() -> str:
    params = connection.get_connection_params()
    return psycopg.conninfo.make_conninfo(
        **{k: v for k, v in params.items() if k in ("host", "port", "dbname", "user", "password")}
    )


def analyzed_at(table: str):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT greatest(last_analyze, last_autoanalyze) FROM pg_stat_user_tables "
            "WHERE relname = %s",
            [table],
        )
        return cursor.fetchone()[0]


def test_a_table_changed_past_autovacuums_threshold_is_analyzed(monkeypatch):
    with connection.cursor() as cursor:
        cursor.execute("SHOW autovacuum")
        if cursor.fetchone()[0] == "on":
            pytest.skip("the server's autovacuum analyzes; the bench leaves it to it")
    monkeypatch.setattr(autoanalyze, "ANALYZE_EVERY", 0.2)
    before = analyzed_at("contacts_contact")
    organization = OrganizationFactory()
    Contact.objects.bulk_create(
        Contact(organization=organization, phone=f"49151{n:08d}") for n in range(200)
    )
    analyzing = autoanalyze.Autoanalyze(conninfo())
    analyzing.start()
    try:
        deadline = time.monotonic() + 30
        while analyzed_at("contacts_contact") == before and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        analyzing.stop()
    assert analyzed_at("contacts_contact") != before
    assert not analyzing.thread.is_alive()
