"""Queued statuses (WHATSAPP_STATUSES_QUEUED): the webhook keeps them in one insert, the
workers apply them in batches, with what the webhook would have done itself."""

import json
import random
import threading
import time

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from accounts.models import Organization
from events.models import Delivery, Emission
from events.services import create_endpoint
from inbound import queued_statuses
from inbound.models import QueuedStatuses
from inbound.queries import queue_if_signed, webhook_signer
from sending.models import Chat, ChatStatusEvent
from tests.background import run_tasks
from tests.channel import PHONE_NUMBER_ID, set_channel
from tests.databases import on_postgresql
from tests.factories import OrganizationFactory
from tests.inbound.conftest import APP_SECRET, deliver, envelope, status, statuses, text_message
from tests.sending.factories import ChatFactory

pytestmark = pytest.mark.django_db

FAILURE = {"code": 131026, "title": "Message undeliverable", "message": "Message undeliverable"}


@pytest.fixture
def queued(settings):
    settings.WHATSAPP_STATUSES_QUEUED = True


@pytest.fixture
def chat(webhook_org):
    return ChatFactory(organization=webhook_org, wam_id="wamid.OUT1")


def test_the_webhook_queues_the_statuses_and_a_worker_applies_them(
    webhook_org, chat, queued, django_assert_num_queries
):
    create_endpoint(organization=webhook_org, url="https://example.com/hook")
    payload = envelope(
        statuses(status("wamid.OUT1", "sent", 100)),
        statuses(status("wamid.OUT1", "delivered", 200)),
    )
    # Taken before the rest of the stack (inbound/middleware.py): the organization's
    # secret and numbers read, then the insert, alone.
    with django_assert_num_queries(2):
        response = deliver(webhook_org, payload)
    assert response.status_code == 200
    assert response.json()["processed"] == {
        "statuses": 0,
        "messages": 0,
        "duplicates": 0,
        "skipped": 0,
        "queued": 2,
    }
    chat.refresh_from_db()
    assert chat.status == "accepted" and not ChatStatusEvent.objects.exists()
    (row,) = QueuedStatuses.objects.all()
    assert row.changes == [change["value"] for change in payload["entry"][0]["changes"]]

    assert run_tasks() >= 1
    chat.refresh_from_db()
    assert chat.status == "delivered"
    events = list(chat.status_events.order_by("timestamp"))
    assert [event.status for event in events] == ["sent", "delivered"]
    # Each keeps the moment the webhook took it, not the moment it was applied.
    assert {event.received_at for event in events} == {row.received_at}
    assert not QueuedStatuses.objects.exists()
    assert Delivery.objects.filter(event="message.status.update").count() == 1


def test_messages_in_the_same_delivery_are_recorded_at_once(webhook_org, chat, queued):
    message = text_message("hello")
    payload = envelope({**message, "statuses": [status("wamid.OUT1", "read", 100)]})
    processed = deliver(webhook_org, payload).json()["processed"]
    assert processed["messages"] == 1 and processed["queued"] == 1
    assert Chat.objects.filter(wam_id=message["messages"][0]["id"]).exists()
    run_tasks()
    chat.refresh_from_db()
    assert chat.status == "read"


def deliveries(wam_ids: list[str]) -> list[dict]:
    """Statuses in every order WhatsApp can send them: some twice, a failure, a `read`
    before its `delivered`, one for a message not recorded yet, several in one delivery."""
    items = []
    for n, wam_id in enumerate(wam_ids):
        names = ["sent", "delivered", "read"] if n % 3 else ["sent", "failed", "delivered"]
        for t, name in enumerate(names):
            extra = {"errors": [FAILURE]} if name == "failed" else {}
            if name == "sent":
                extra["pricing"] = {"billable": True, "category": "marketing"}
            items.append(status(wam_id, name, 100 + t, **extra))
    items += items[::5]  # delivered again
    items.append(status("wamid.UNKNOWN", "sent", 100))
    random.Random(7).shuffle(items)
    return [envelope(statuses(*items[i : i + 3])) for i in range(0, len(items), 3)]


def state(organization) -> tuple:
    chats = sorted(
        Chat.objects.filter(organization=organization).values_list(
            "wam_id", "status", "error_code", "error_title"
        )
    )
    stored = sorted(
        ChatStatusEvent.objects.filter(organization=organization).values_list(
            "wam_id", "status", "timestamp", "chat__wam_id", "error_code", "pricing"
        )
    )
    return chats, stored, announced()


def announced() -> dict[str, list[str]]:
    """Each chat's message.status.update events in order: the status each announced."""
    found: dict[str, list[str]] = {}
    emitted = Emission.objects.filter(event="message.status.update").order_by("id")
    for body in emitted.values_list("body", flat=True):
        data = json.loads(body)["data"]
        found.setdefault(data["wam_id"], []).append(data["status"])
    return found


def test_applied_later_in_batches_as_the_webhook_applies_them(settings):
    """The same deliveries to two organizations, one applied by the webhook, the other
    queued and applied in batches of two: the same chats, statuses and events."""
    outcomes = []
    for queue in (False, True):
        settings.WHATSAPP_STATUSES_QUEUED = queue
        organization = OrganizationFactory()
        set_channel(organization, app_secret=APP_SECRET)
        create_endpoint(organization=organization, url="https://example.com/hook")
        wam_ids = [f"wamid.{n}" for n in range(9)]
        for wam_id in wam_ids:
            ChatFactory(organization=organization, wam_id=wam_id)
        for payload in deliveries(wam_ids):
            assert deliver(organization, payload).status_code == 200
        while queued_statuses.apply_queued_statuses(limit=2):
            pass
        outcomes.append(state(organization))
        Emission.objects.all().delete()
    inline, later = outcomes
    assert later == inline
    assert any(status == "failed" for _, status, *_ in later[0])


def test_two_deliveries_of_one_message_in_a_batch_are_two_events(webhook_org, chat, queued):
    """As the webhook would have announced them: one event a delivery that moves the
    chat, even when the worker takes both at once."""
    create_endpoint(organization=webhook_org, url="https://example.com/hook")
    other = ChatFactory(organization=webhook_org, wam_id="wamid.OUT2")
    for payload in (
        envelope(statuses(status("wamid.OUT1", "sent", 100))),
        envelope(statuses(status("wamid.OUT2", "sent", 100))),
        envelope(statuses(status("wamid.OUT1", "delivered", 200))),
        envelope(statuses(status("wamid.OUT1", "read", 300))),
    ):
        deliver(webhook_org, payload)
    assert queued_statuses.apply_queued_statuses() == 4
    assert announced() == {
        "wamid.OUT1": ["sent", "delivered", "read"],
        "wamid.OUT2": ["sent"],
    }
    chat.refresh_from_db()
    other.refresh_from_db()
    assert (chat.status, other.status) == ("read", "sent")


def test_a_delivery_that_cannot_be_applied_is_kept_aside_and_holds_up_no_other(
    webhook_org, chat, queued, monkeypatch
):
    other = ChatFactory(organization=webhook_org, wam_id="wamid.OUT2")
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "delivered", 100))))
    deliver(webhook_org, envelope(statuses(status("wamid.OUT2", "delivered", 100))))
    real = queued_statuses.store_statuses

    def failing(organization, updates):
        if any(update.wam_id == "wamid.OUT1" for update in updates):
            raise RuntimeError("a bug")
        return real(organization, updates)

    monkeypatch.setattr(queued_statuses, "store_statuses", failing)
    assert queued_statuses.apply_queued_statuses() == 2
    other.refresh_from_db()
    chat.refresh_from_db()
    assert other.status == "delivered" and chat.status == "accepted"
    (aside,) = QueuedStatuses.objects.all()
    assert aside.error == "RuntimeError: a bug"
    assert queued_statuses.apply_queued_statuses() == 0  # not taken again
    assert "1 could not be applied" in queued_statuses.backlog()


def test_unreadable_items_are_skipped_as_the_webhook_skips_them(webhook_org, chat, queued):
    payload = envelope(
        statuses(
            status("wamid.OUT1", "delivered", 100),
            {"id": "wamid.OUT1", "status": "teleported", "timestamp": "100"},
            {"status": "sent"},
            "not an object",
        )
    )
    assert deliver(webhook_org, payload).json()["processed"]["queued"] == 4
    run_tasks()
    chat.refresh_from_db()
    assert chat.status == "delivered"
    assert not QueuedStatuses.objects.exists()


def test_off_applies_at_once(webhook_org, chat):
    processed = deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "read", 1)))).json()
    assert processed["processed"]["statuses"] == 1 and "queued" not in processed["processed"]
    assert not QueuedStatuses.objects.exists()


def test_a_batch_holds_each_message_id_once_in_two_round_trips(webhook_org, queued):
    for n in range(30):
        ChatFactory(organization=webhook_org, wam_id=f"wamid.B{n}")
        deliver(webhook_org, envelope(statuses(status(f"wamid.B{n}", "delivered", 100))))
    with CaptureQueriesContext(connection) as batch:
        assert queued_statuses.apply_queued_statuses() == 30
    deliver(webhook_org, envelope(statuses(status("wamid.B0", "read", 200))))
    with CaptureQueriesContext(connection) as one:
        assert queued_statuses.apply_queued_statuses() == 1
    # Thirty deliveries cost the statements of one.
    assert len(batch) == len(one)
    assert Chat.objects.filter(status="delivered").count() == 29


@pytest.mark.django_db(transaction=True)  # the queue's thread has its own connection
def test_the_queue_thread_goes_on_after_a_failure(webhook_org, chat, queued, monkeypatch):
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "delivered", 100))))
    real, calls = queued_statuses.apply_queued_statuses, []

    def failing_once() -> int:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a bug outside the batch's own recovery")
        return real()

    monkeypatch.setattr(queued_statuses, "apply_queued_statuses", failing_once)
    stopping = threading.Event()
    thread = threading.Thread(target=queued_statuses.StatusQueue().serve, args=("t", stopping))
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while QueuedStatuses.objects.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stopping.set()
        thread.join(10)
    assert len(calls) >= 2 and not QueuedStatuses.objects.exists()
    chat.refresh_from_db()
    assert chat.status == "delivered"


def test_a_delivery_whose_organization_is_gone_is_dropped(webhook_org, chat, queued):
    # The queue has no foreign key in the database (inbound/models.py): a webhook's insert
    # that races its organization's deletion leaves a row naming no organization.
    gone = OrganizationFactory()
    gone_id = gone.pk
    gone.delete()
    QueuedStatuses.objects.create(
        organization_id=gone_id, changes=[statuses(status("wamid.OUT1", "read", 100))]
    )
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "delivered", 100))))
    assert queued_statuses.apply_queued_statuses() == 2
    chat.refresh_from_db()
    assert chat.status == "delivered"  # the other organization's delivery is applied
    assert not QueuedStatuses.objects.exists()  # and the orphan is not kept aside


def test_an_organization_deleted_takes_its_queued_statuses(webhook_org, queued):
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "delivered", 100))))
    other = OrganizationFactory()
    QueuedStatuses.objects.create(organization=other, changes=[])
    other.delete()
    assert list(QueuedStatuses.objects.values_list("organization_id", flat=True)) == [
        webhook_org.pk
    ]


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_queueing_does_not_lock_the_organization_row(webhook_org, queued):
    """With a foreign key, each insert's check locked the organization's row (FOR KEY
    SHARE) until its commit, and two inserts at once made that lock a MultiXact."""
    signer = webhook_signer(str(webhook_org.uuid))
    changes = [statuses(status("wamid.OUT1", "delivered", 100))]
    inserted, release, outcome = threading.Event(), threading.Event(), []

    def queue_and_hold() -> None:
        try:
            with transaction.atomic():
                # Django's foreign keys are checked at commit: checked here instead, the
                # lock a check takes would be held while this transaction is open.
                with connection.cursor() as cursor:
                    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                outcome.append(queue_if_signed(signer, PHONE_NUMBER_ID, changes))
                inserted.set()
                release.wait(10)
        finally:
            inserted.set()
            connection.close()

    holder = threading.Thread(target=queue_and_hold)
    holder.start()
    try:
        assert inserted.wait(10) and outcome == [True]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT id FROM accounts_organization WHERE id = %s FOR UPDATE NOWAIT",
                [webhook_org.pk],
            )  # raises LockNotAvailable while another transaction holds a key-share lock
            assert cursor.fetchall() == [(webhook_org.pk,)]
    finally:
        release.set()
        holder.join(10)
    assert QueuedStatuses.objects.count() == 1


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_delivery_queued_while_its_organization_is_deleted_is_dropped(webhook_org, queued):
    """The race the dropped row stands for: the insert finds the number of an organization
    whose deletion (its queued rows already deleted) has not committed yet."""
    signer = webhook_signer(str(webhook_org.uuid))
    changes = [statuses(status("wamid.OUT1", "delivered", 100))]
    deleted, release = threading.Event(), threading.Event()

    def delete_and_hold() -> None:
        try:
            with transaction.atomic():
                Organization.objects.get(pk=webhook_org.pk).delete()
                deleted.set()
                release.wait(10)
        finally:
            deleted.set()
            connection.close()

    deleter = threading.Thread(target=delete_and_hold)
    deleter.start()
    try:
        assert deleted.wait(10)
        assert queue_if_signed(signer, PHONE_NUMBER_ID, changes)  # committed first
    finally:
        release.set()
        deleter.join(10)
    assert not Organization.objects.filter(pk=webhook_org.pk).exists()
    assert QueuedStatuses.objects.count() == 1
    assert queued_statuses.apply_queued_statuses() == 1
    assert not QueuedStatuses.objects.exists()
