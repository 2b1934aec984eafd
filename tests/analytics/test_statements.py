"""What keeping the figures adds to the hot paths, pinned in statements: the webhooks'
and the sends' transactions each pay a fixed few, whatever the batch's size."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.analytics.conftest import MARKETING, send, totals
from tests.inbound.conftest import deliver, envelope, status, statuses, text_message

pytestmark = pytest.mark.django_db

# Billing (a claim per message, then the count of those claimed now) is one statement on
# PostgreSQL (analytics/queries.py, bill_in_one_statement) and two elsewhere. On
# PostgreSQL the statements that read nothing back wait for the end of the event batch
# and go in one round trip (events.services.at_batch_end): counted here as one.
ON_POSTGRESQL = connection.vendor == "postgresql"
BILLING = 1 if ON_POSTGRESQL else 2


def analytics_statements(captured: CaptureQueriesContext) -> list[str]:
    return [query["sql"] for query in captured.captured_queries if "analytics_" in query["sql"]]


@pytest.mark.parametrize("chats", [1, 5])
def test_a_status_delivery_adds_the_moves_and_the_billing(webhook_org, chats):
    for n in range(chats):
        send(webhook_org, wam_id=f"wamid.A{n}")
    items = [status(f"wamid.A{n}", "sent", 100, pricing=MARKETING) for n in range(chats)]
    with CaptureQueriesContext(connection) as captured:
        assert deliver(webhook_org, envelope(statuses(*items))).status_code == 200
    # The moves and the billing: one round trip on PostgreSQL.
    assert len(analytics_statements(captured)) == (1 if ON_POSTGRESQL else 1 + BILLING)
    assert totals(webhook_org)["billable"] == {"marketing": chats}


def test_a_status_already_billed_adds_no_billing_count(webhook_org):
    send(webhook_org, wam_id="wamid.A1")
    deliver(webhook_org, envelope(statuses(status("wamid.A1", "sent", 100, pricing=MARKETING))))
    delivered = status("wamid.A1", "delivered", 200, pricing=MARKETING)
    with CaptureQueriesContext(connection) as captured:
        deliver(webhook_org, envelope(statuses(delivered)))
    # The move, and the claim that finds the message billed (nothing left to count): one
    # round trip on PostgreSQL.
    assert len(analytics_statements(captured)) == (1 if ON_POSTGRESQL else 2)
    assert totals(webhook_org)["billable"] == {"marketing": 1}
    assert totals(webhook_org)["delivered"] == 1


def test_a_repeated_status_adds_nothing(webhook_org):
    send(webhook_org, wam_id="wamid.A1")
    payload = envelope(statuses(status("wamid.A1", "read", 300)))
    deliver(webhook_org, payload)
    with CaptureQueriesContext(connection) as captured:
        deliver(webhook_org, payload)
    assert analytics_statements(captured) == []


def test_a_message_from_a_new_sender_adds_its_count_and_the_wait(webhook_org):
    with CaptureQueriesContext(connection) as captured:
        deliver(webhook_org, envelope(text_message("hi", sender="4915100000001")))
    # The conversation waiting for staff, and the message counted: one round trip on
    # PostgreSQL.
    written = " ".join(analytics_statements(captured))
    assert len(analytics_statements(captured)) == (1 if ON_POSTGRESQL else 2)
    assert written.index("analytics_awaiting") < written.index("analytics_dailymessages")


def test_a_send_adds_one_statement(webhook_org):
    with CaptureQueriesContext(connection) as captured:
        send(webhook_org, wam_id="wamid.A1")
    assert len(analytics_statements(captured)) == 1
