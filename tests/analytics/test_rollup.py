"""The daily figures, kept as messages and statuses come through the signed webhook:
exact whatever the statuses' order, repeats or gaps."""

from datetime import UTC, datetime, timedelta
from itertools import permutations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from analytics.models import DailyMessages
from business_numbers.gateway import FailureKind, GatewayError
from business_numbers.models import Number
from sending.models import Chat
from sending.services.chats import record_failure
from tests.analytics.conftest import FREE, MARKETING, day_figures, send, totals
from tests.factories import ContactFactory
from tests.inbound.conftest import deliver, envelope, status, statuses, text_message

pytestmark = pytest.mark.django_db

NOTHING = {
    "outbound": 0,
    "sent": 0,
    "delivered": 0,
    "read": 0,
    "failed": 0,
    "inbound": 0,
    "billable": {},
}


def figures(**counts) -> dict:
    return {**NOTHING, **counts}


def post_statuses(organization, *items) -> None:
    response = deliver(organization, envelope(statuses(*items)))
    assert response.status_code == 200, response.content


def test_an_accepted_send_counts_outbound_only(webhook_org):
    send(webhook_org, wam_id="wamid.A1")
    assert totals(webhook_org) == figures(outbound=1)


@pytest.mark.parametrize("order", list(permutations(["sent", "delivered", "read"])))
def test_any_order_counts_a_read_message_once_as_sent_delivered_and_read(webhook_org, order):
    send(webhook_org, wam_id="wamid.A1")
    times = {"sent": 100, "delivered": 200, "read": 300}
    for name in order:  # one delivery each
        post_statuses(webhook_org, status("wamid.A1", name, times[name]))
    assert totals(webhook_org) == figures(outbound=1, sent=1, delivered=1, read=1)


def test_read_before_delivered_and_repeats_count_once(webhook_org):
    send(webhook_org, wam_id="wamid.A1")
    send(webhook_org, wam_id="wamid.A2")
    post_statuses(webhook_org, status("wamid.A1", "read", 300))
    post_statuses(webhook_org, status("wamid.A1", "read", 300), status("wamid.A1", "read", 301))
    post_statuses(webhook_org, status("wamid.A1", "delivered", 200))
    post_statuses(
        webhook_org, status("wamid.A2", "delivered", 200), status("wamid.A2", "sent", 100)
    )
    post_statuses(webhook_org, status("wamid.A2", "delivered", 200))
    assert totals(webhook_org) == figures(outbound=2, sent=2, delivered=2, read=1)


def test_failed_after_sent_counts_as_failed_only(webhook_org):
    send(webhook_org, wam_id="wamid.A1")
    post_statuses(webhook_org, status("wamid.A1", "sent", 100))
    assert totals(webhook_org) == figures(outbound=1, sent=1)
    error = {"code": 131026, "title": "Message undeliverable"}
    post_statuses(webhook_org, status("wamid.A1", "failed", 200, errors=[error]))
    post_statuses(webhook_org, status("wamid.A1", "delivered", 300))  # too late to matter
    assert totals(webhook_org) == figures(outbound=1, failed=1)


def test_a_refused_send_counts_failed(webhook_org):
    record_failure(
        organization=webhook_org,
        number=Number.objects.default_for(webhook_org),
        contact=ContactFactory(organization=webhook_org),
        metadata={"type": "text", "text": {"body": "Hi"}},
        error=GatewayError(FailureKind.REFUSED, "Re-engagement message", code=131047),
    )
    assert totals(webhook_org) == figures(outbound=1, failed=1)


def test_statuses_before_their_chat_count_when_it_is_recorded(webhook_org):
    # Meta may post a status before the send has recorded its chat (kept aside).
    post_statuses(webhook_org, status("wamid.A1", "delivered", 100, pricing=MARKETING))
    send(webhook_org, wam_id="wamid.A1")
    # Its price too, as the rebuild from the chats counts it.
    assert totals(webhook_org) == {
        **figures(outbound=1, sent=1, delivered=1),
        "billable": {"marketing": 1},
    }


def test_inbound_messages_count_once(webhook_org):
    payload = envelope(text_message("hello", wam_id="wamid.IN1"))
    deliver(webhook_org, payload)
    deliver(webhook_org, payload)  # WhatsApp delivers again
    deliver(webhook_org, envelope(text_message("again", wam_id="wamid.IN2")))
    assert totals(webhook_org) == figures(inbound=2)


def test_billable_counts_each_message_once_by_category(webhook_org):
    send(webhook_org, wam_id="wamid.A1")
    send(webhook_org, wam_id="wamid.A2")
    send(webhook_org, wam_id="wamid.A3")
    post_statuses(
        webhook_org,
        status("wamid.A1", "sent", 100, pricing=MARKETING),
        status("wamid.A1", "delivered", 200, pricing=MARKETING),
        status("wamid.A2", "sent", 100, pricing=FREE),
    )
    post_statuses(webhook_org, status("wamid.A1", "read", 300, pricing=MARKETING))
    utility = {**MARKETING, "category": "utility"}
    post_statuses(webhook_org, status("wamid.A3", "delivered", 200, pricing=utility))
    post_statuses(webhook_org, status("wamid.A3", "delivered", 200, pricing=utility))
    assert totals(webhook_org)["billable"] == {"marketing": 1, "utility": 1}


def test_a_message_counts_on_the_utc_day_it_was_created(webhook_org, monkeypatch):
    before_midnight = datetime(2026, 3, 1, 23, 59, 59, 999999, tzinfo=UTC)
    monkeypatch.setattr(timezone, "now", lambda: before_midnight)
    send(webhook_org, wam_id="wamid.A1")
    midnight = datetime(2026, 3, 2, tzinfo=UTC)
    monkeypatch.setattr(timezone, "now", lambda: midnight)
    send(webhook_org, wam_id="wamid.A2")
    deliver(webhook_org, envelope(text_message("hi", wam_id="wamid.IN1")))
    # The status comes the next day: the message still counts on its own.
    post_statuses(webhook_org, status("wamid.A1", "delivered", int(midnight.timestamp()) + 60))
    first, second = before_midnight.date(), midnight.date()
    assert day_figures(webhook_org, first) == figures(outbound=1, sent=1, delivered=1)
    assert day_figures(webhook_org, second) == figures(outbound=1, inbound=1)
    assert day_figures(webhook_org, second + timedelta(days=1)) == figures()


def test_each_number_has_its_own_figures(webhook_org):
    other = Number.objects.create(
        organization=webhook_org, label="Second", kind="sandbox", phone_number_id="2"
    )
    send(webhook_org, wam_id="wamid.A1")
    chat = send(webhook_org, wam_id="wamid.A2")
    Chat.objects.filter(pk=chat.pk).update(number=other)  # (no figure moves: a fixture)
    today = timezone.now().date()
    default = Number.objects.default_for(webhook_org)
    assert day_figures(webhook_org, today, default)["outbound"] == 2
    assert day_figures(webhook_org, today, other)["outbound"] == 0


def test_rebuild_equals_the_figures_kept_live(webhook_org):
    for n in range(4):
        send(webhook_org, wam_id=f"wamid.A{n}")
    post_statuses(
        webhook_org,
        status("wamid.A0", "read", 300, pricing=MARKETING),
        status("wamid.A1", "delivered", 200, pricing=MARKETING),
        status("wamid.A2", "failed", 200, errors=[{"code": 131026, "title": "Undeliverable"}]),
        status("wamid.A0", "delivered", 200, pricing=MARKETING),
    )
    deliver(webhook_org, envelope(text_message("hi", wam_id="wamid.IN1")))
    call_command("analytics_rebuild", "--check")  # raises when they differ


def test_rebuild_repairs_what_differs(webhook_org, capsys):
    send(webhook_org, wam_id="wamid.A1")
    post_statuses(webhook_org, status("wamid.A1", "read", 300, pricing=MARKETING))
    kept = totals(webhook_org)
    DailyMessages.objects.update(read=7, outbound=0)
    with pytest.raises(CommandError):
        call_command("analytics_rebuild", "--check")
    assert "messages differ" in capsys.readouterr().out
    call_command("analytics_rebuild")
    assert totals(webhook_org) == kept
    call_command("analytics_rebuild", "--check")
