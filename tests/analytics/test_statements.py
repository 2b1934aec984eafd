"""What keeping the figures adds to the hot paths, pinned in statements: the sends' and
inbound messages' transactions each append their increments in a fixed few inserts,
whatever the batch's size, and touch no row another request writes; a status webhook
writes nothing for them but the chat it moves (the fold adds both to the rollup later:
tests/analytics/test_folding.py)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sending.models import Chat, ChatStatus
from tests.analytics.conftest import MARKETING, send, totals
from tests.inbound.conftest import deliver, envelope, status, statuses, text_message

pytestmark = pytest.mark.django_db


def analytics_statements(captured: CaptureQueriesContext) -> list[str]:
    """The statements that write the figures: on PostgreSQL those of a batch's end go in
    one execute (events.services.at_batch_end), separated as execute_together joins them."""
    return [
        statement.strip()
        for query in captured.captured_queries
        for statement in query["sql"].split(";\n")
        if "analytics_" in statement
    ]


def appended_only(statements: list[str]) -> bool:
    return all(sql.startswith("INSERT INTO analytics_increment ") for sql in statements)


def chat_statements(captured: CaptureQueriesContext) -> list[str]:
    return [
        statement.strip()
        for query in captured.captured_queries
        for statement in query["sql"].split(";\n")
        if statement.strip().startswith("UPDATE sending_chat ")
    ]


@pytest.mark.parametrize("chats", [1, 5])
def test_a_status_delivery_writes_nothing_for_the_figures_but_its_chats(webhook_org, chats):
    for n in range(chats):
        send(webhook_org, wam_id=f"wamid.A{n}")
    items = [status(f"wamid.A{n}", "sent", 100, pricing=MARKETING) for n in range(chats)]
    with CaptureQueriesContext(connection) as captured:
        assert deliver(webhook_org, envelope(statuses(*items))).status_code == 200
    assert analytics_statements(captured) == []
    # One update moves the chats, and keeps the status the figures counted them at.
    (moved,) = chat_statements(captured)
    assert "counted_status = COALESCE(counted_status, status)" in moved
    marks = Chat.objects.filter(wam_id__startswith="wamid.A").values_list("counted_status")
    assert set(marks) == {(ChatStatus.ACCEPTED,)}
    assert totals(webhook_org)["sent"] == chats
    assert totals(webhook_org)["billable"] == {"marketing": chats}


def test_a_status_already_billed_is_counted_once(webhook_org):
    send(webhook_org, wam_id="wamid.A1")
    deliver(webhook_org, envelope(statuses(status("wamid.A1", "sent", 100, pricing=MARKETING))))
    assert totals(webhook_org)["billable"] == {"marketing": 1}
    delivered = status("wamid.A1", "delivered", 200, pricing=MARKETING)
    with CaptureQueriesContext(connection) as captured:
        deliver(webhook_org, envelope(statuses(delivered)))
    assert analytics_statements(captured) == []
    assert len(chat_statements(captured)) == 1  # the move
    assert totals(webhook_org)["billable"] == {"marketing": 1}
    assert totals(webhook_org)["delivered"] == 1


def test_a_priced_status_that_moves_nothing_has_its_chat_counted_again(webhook_org):
    # A `read` (unpriced) before its `delivered` (priced): the delivered moves nothing, and
    # its price still counts, by a statement of its own on this rare path only.
    send(webhook_org, wam_id="wamid.A1")
    deliver(webhook_org, envelope(statuses(status("wamid.A1", "read", 300))))
    assert totals(webhook_org)["billable"] == {}
    delivered = status("wamid.A1", "delivered", 200, pricing=MARKETING)
    with CaptureQueriesContext(connection) as captured:
        deliver(webhook_org, envelope(statuses(delivered)))
    # The conditional move (which finds the chat read), and the recount.
    moving, recount = chat_statements(captured)
    assert "status IN (" in moving or "status = ANY(" in moving  # SQLite's, PostgreSQL's
    assert "counted_status IS NULL" in recount
    assert Chat.objects.get(wam_id="wamid.A1").counted_status == ChatStatus.READ
    assert totals(webhook_org) == {**totals(webhook_org), "read": 1, "billable": {"marketing": 1}}


def test_a_repeated_status_adds_nothing(webhook_org):
    send(webhook_org, wam_id="wamid.A1")
    payload = envelope(statuses(status("wamid.A1", "read", 300)))
    deliver(webhook_org, payload)
    with CaptureQueriesContext(connection) as captured:
        deliver(webhook_org, payload)
    assert analytics_statements(captured) == []


def test_a_message_from_a_new_sender_appends_its_count_and_the_wait(webhook_org):
    with CaptureQueriesContext(connection) as captured:
        deliver(webhook_org, envelope(text_message("hi", sender="4915100000001")))
    # The conversation waiting for staff, and the message's count: one insert each.
    written = analytics_statements(captured)
    assert len(written) == 2
    assert appended_only(written)


def test_a_send_appends_one_statement(webhook_org):
    with CaptureQueriesContext(connection) as captured:
        send(webhook_org, wam_id="wamid.A1")
    written = analytics_statements(captured)
    assert len(written) == 1
    assert appended_only(written)
