"""A backlog of deliveries to dead endpoints does not make the claim dearer: on
PostgreSQL the claim reads each endpoint's head through an index (docs/events.md), so
it touches as many rows, and takes about as long, beside 50,000 pending deliveries as
beside 1,000. That holds for an endpoint with nothing pending too: a probe of its head
that walked the primary key instead read the whole backlog to find nothing there."""

import json
import time
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from events import queries, services
from events.delivery import claim, fan_out_all, lease
from events.models import Endpoint
from tests.databases import on_postgresql
from tests.factories import OrganizationFactory

pytestmark = [on_postgresql, pytest.mark.django_db]

# A third of a backlog has been tried and waits for its retry (an hour away), a third
# has never been tried, and a third is due again: all of it to the dead endpoints.
BACKLOG_SQL = """
INSERT INTO events_delivery (organization_id, endpoint_id, msg_id, event, body, status,
    attempts, next_attempt_at, last_error, created_at, updated_at)
SELECT %(organization)s, (%(endpoints)s::bigint[])[1 + n %% cardinality(%(endpoints)s::bigint[])],
    'msg_backlog_' || %(start)s || '_' || n, 'group.created', '{"type":"group.created"}',
    'pending', CASE WHEN n %% 3 = 0 THEN 0 ELSE 1 END,
    CASE n %% 3 WHEN 0 THEN NULL WHEN 1 THEN now() + interval '1 hour'
        ELSE now() - interval '1 second' END,
    '', now(), now()
FROM generate_series(%(start)s, %(start)s + %(count)s - 1) AS n
"""


@pytest.fixture
def dead(settings):
    """An organization with ten endpoints that never answer, and another organization
    with one endpoint that has nothing pending (as in bench/backlog.py)."""
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT = 4
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_ORGANIZATION = 16
    organization = OrganizationFactory()
    endpoints = [
        services.create_endpoint(organization=organization, url=f"https://dead.example.com/{n}")
        for n in range(10)
    ]
    services.create_endpoint(organization=OrganizationFactory(), url="https://quiet.example.com/")
    return organization, [endpoint.pk for endpoint in endpoints]


def add_backlog(organization, endpoints: list[int], start: int, count: int) -> None:
    params = {"organization": organization.pk, "endpoints": endpoints, "start": start}
    with connection.cursor() as cursor:
        cursor.execute(BACKLOG_SQL, {**params, "count": count})
        cursor.execute("ANALYZE events_delivery")


def claim_plan(statement: str = queries.CLAIM_SQL) -> dict:
    """The claim statement's plan as it ran (EXPLAIN ANALYZE, BUFFERS), rolled back."""
    now = timezone.now()
    params = {
        "now": now,
        "until": now + lease(),
        "limit": 32,
        "per_endpoint": 4,
        "per_organization": 16,
    }
    sql = "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + queries.claim_statement(statement)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)
        [plan] = cursor.fetchone()[0]
        transaction.set_rollback(True)
    return plan


def nodes(plan: dict):
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)


def delivery_rows_read(plan: dict) -> int:
    """Rows the plan's scans of events_delivery returned, over all their loops, plus
    those they read and filtered out."""
    return sum(
        node.get("Actual Rows", 0) * node.get("Actual Loops", 1)
        + node.get("Rows Removed by Filter", 0)
        for node in nodes(plan["Plan"])
        if node.get("Relation Name") == "events_delivery"
    )


def pages_touched(plan: dict) -> int:
    top = plan["Plan"]
    return top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0)


def median_claim_ms(times: int = 15) -> float:
    took = []
    for _ in range(times):
        with transaction.atomic():
            started = time.perf_counter()
            claimed = claim(32)
            took.append(time.perf_counter() - started)
            transaction.set_rollback(True)
        assert len(claimed) == 16  # the organization's cap, four per endpoint
    return sorted(took)[len(took) // 2] * 1000


def test_the_claim_reads_as_many_rows_beside_50000_pending_as_beside_1000(dead):
    organization, endpoints = dead
    add_backlog(organization, endpoints, 0, 1_000)
    small = claim_plan()
    small_ms = median_claim_ms()

    add_backlog(organization, endpoints, 1_000, 49_000)
    large = claim_plan()
    large_ms = median_claim_ms()
    look = claim_plan(queries.ANY_DUE_SQL)

    for plan in (large, look):
        scans = {node["Node Type"] for node in nodes(plan["Plan"])
                 if node.get("Relation Name") == "events_delivery"}  # fmt: skip
        assert "Seq Scan" not in scans, json.dumps(plan)
        # Each endpoint's head: a few rows per endpoint, the same at both sizes.
        assert delivery_rows_read(plan) <= 200, json.dumps(plan)
    assert delivery_rows_read(large) <= delivery_rows_read(small) + 20
    assert pages_touched(large) <= 2 * pages_touched(small) + 50
    # Generous, for a shared machine: numbering every due row took 50 times as long.
    assert large_ms <= 3 * small_ms + 5, (small_ms, large_ms)


def test_the_idle_look_reads_no_backlog_when_nothing_is_due(dead):
    """The dead endpoints backed off: only the quiet endpoint takes deliveries, and it
    has none; the look says so from its index heads, not by reading the backlog."""
    organization, endpoints = dead
    add_backlog(organization, endpoints, 0, 50_000)
    Endpoint.objects.filter(pk__in=endpoints).update(open_until=timezone.now() + timedelta(hours=1))

    look = claim_plan(queries.ANY_DUE_SQL)

    assert delivery_rows_read(look) <= 10, json.dumps(look)
    assert pages_touched(look) <= 50, json.dumps(look)
    assert claim(32) == []


def test_beside_the_backlog_another_organizations_deliveries_are_taken(dead):
    organization, endpoints = dead
    add_backlog(organization, endpoints, 0, 20_000)
    other = OrganizationFactory()
    live = services.create_endpoint(organization=other, url="https://live.example.com/")
    for n in range(3):
        services.emit_event(organization_id=other.pk, event="group.created", data={"n": n})
    fan_out_all()

    taken = claim(100)

    per_endpoint = Counter(item.endpoint_id for item in taken)
    assert per_endpoint[live.pk] == 3
    assert sum(per_endpoint[pk] for pk in endpoints) == 16
    assert max(per_endpoint[pk] for pk in endpoints) <= 4
    # Never one waiting for its retry (an hour away): the third numbered 1 modulo 3.
    dead_numbers = [
        int(item.msg_id.rsplit("_", 1)[1]) for item in taken if item.endpoint_id != live.pk
    ]
    assert dead_numbers and all(n % 3 != 1 for n in dead_numbers)
