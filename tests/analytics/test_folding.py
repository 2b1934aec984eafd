"""The fold: the increments the webhooks and sends append, added to the rollup exactly
once, by the worker each minute and by a read for its organization."""

import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction

from accounts.models import Organization
from analytics import folding
from analytics.folding import fold
from analytics.models import Awaiting, BilledMessage, DailyBillable, DailyMessages, Increment
from analytics.queries import take_increments
from analytics.tasks import fold_increments
from messaging_project.worker.schedule import jobs
from sending.models import Chat, ChatStatus, MovedChat
from tests.analytics.conftest import MARKETING, held_by_a_webhook, send, totals
from tests.databases import on_postgresql
from tests.factories import OrganizationFactory
from tests.inbound.conftest import deliver, envelope, status, statuses, text_message
from tests.tasks.processes import ROOT, environment

pytestmark = pytest.mark.django_db


def rollup() -> list[tuple]:
    return list(
        DailyMessages.objects.order_by("organization_id").values_list(
            "organization_id", "outbound", "sent", "delivered", "read", "failed", "inbound"
        )
    )


def test_a_fold_adds_each_increment_once(webhook_org):
    send(webhook_org, wam_id="wamid.A1")
    deliver(webhook_org, envelope(statuses(status("wamid.A1", "sent", 100, pricing=MARKETING))))
    deliver(webhook_org, envelope(text_message("hi", wam_id="wamid.IN1")))
    appended = Increment.objects.count()
    # The send, the inbound message and its conversation's wait for staff; the status
    # marked its chat instead (moved, and priced).
    assert appended == 3
    assert Chat.objects.get(wam_id="wamid.A1").counted_status == ChatStatus.ACCEPTED
    assert not Awaiting.objects.exists()
    assert fold() == appended + 1
    assert Chat.objects.get(wam_id="wamid.A1").counted_status is None
    assert not Increment.objects.exists()
    assert Awaiting.objects.count() == 1
    assert rollup() == [(webhook_org.pk, 1, 1, 0, 0, 0, 1)]
    assert fold() == 0
    assert rollup() == [(webhook_org.pk, 1, 1, 0, 0, 0, 1)]
    assert DailyBillable.objects.get().messages == 1


def test_a_read_folds_its_own_organization_only(webhook_org):
    other = OrganizationFactory()
    send(other, wam_id="wamid.B1")
    send(webhook_org, wam_id="wamid.A1")
    assert totals(webhook_org)["outbound"] == 1
    assert list(Increment.objects.values_list("organization_id", flat=True)) == [other.pk]
    assert totals(other)["outbound"] == 1
    assert not Increment.objects.exists()


def test_a_billable_message_counts_once_across_folds(webhook_org):
    send(webhook_org, wam_id="wamid.A1")
    deliver(webhook_org, envelope(statuses(status("wamid.A1", "sent", 100, pricing=MARKETING))))
    fold()
    deliver(
        webhook_org, envelope(statuses(status("wamid.A1", "delivered", 200, pricing=MARKETING)))
    )
    fold()
    assert totals(webhook_org)["billable"] == {"marketing": 1}
    assert BilledMessage.objects.get().category == "marketing"


def lose_the_connection_after(monkeypatch, name: str) -> None:
    """folding's `name` does its work, then the connection drops (before the commit)."""
    real = getattr(folding, name)

    def then_lost(*args):
        real(*args)
        raise RuntimeError("the connection dropped")

    monkeypatch.setattr(folding, name, then_lost)


@pytest.mark.django_db(transaction=True)  # the fold's own transaction, rolled back
def test_a_fold_that_fails_takes_nothing(webhook_org, monkeypatch):
    send(webhook_org, wam_id="wamid.A1")
    # The batch taken and added (in one statement on PostgreSQL), then the connection lost.
    lose_the_connection_after(
        monkeypatch, "fold_batch" if connection.vendor == "postgresql" else "add_to_rollup"
    )
    with pytest.raises(RuntimeError):
        fold()
    assert Increment.objects.count() == 1
    assert not DailyMessages.objects.exists()
    monkeypatch.undo()
    assert totals(webhook_org)["outbound"] == 1


def test_the_increments_of_a_deleted_organization_are_dropped(webhook_org):
    gone = OrganizationFactory()
    send(gone, wam_id="wamid.B1")
    chat = send(gone, wam_id="wamid.B2")
    deliver(webhook_org, envelope(text_message("hi", wam_id="wamid.IN1")))
    # A billable status of the organization's chat, appended as its webhook would.
    Increment.objects.create(
        organization_id=gone.pk, number_id=chat.number_id, day=chat.created_at.date(),
        chat_id=chat.pk, category="marketing",
    )  # fmt: skip
    Organization.objects.filter(pk=gone.pk).delete()
    assert fold() == 5  # and the message's wait for staff
    assert rollup() == [(webhook_org.pk, 0, 0, 0, 0, 0, 1)]
    assert not BilledMessage.objects.exists()


def test_the_worker_folds_every_organization_each_minute(webhook_org):
    job = jobs[fold_increments.module_path]
    assert job.interval == timedelta(minutes=1)
    send(webhook_org, wam_id="wamid.A1")
    send(OrganizationFactory(), wam_id="wamid.B1")
    assert fold_increments.call() == 2
    assert len(rollup()) == 2


@pytest.mark.parametrize("rows", [2, 3, 4, 6, 7])
def test_a_fold_takes_every_increment_whatever_the_batch(webhook_org, rows, monkeypatch):
    monkeypatch.setattr(folding, "BATCH", 3)  # the batch's edges, with few rows
    chat = send(webhook_org, wam_id="wamid.A1")
    Increment.objects.bulk_create(
        Increment(
            organization_id=webhook_org.pk, number_id=chat.number_id,
            day=chat.created_at.date(), inbound=1,
        )
        for _ in range(rows)
    )  # fmt: skip
    assert fold() == rows + 1  # and the send's
    assert totals(webhook_org)["inbound"] == rows


def test_a_message_priced_twice_in_one_fold_keeps_its_first_category(webhook_org):
    chat = send(webhook_org, wam_id="wamid.A1")
    for category in ("utility", "marketing"):  # appended in this order
        Increment.objects.create(
            organization_id=webhook_org.pk, number_id=chat.number_id,
            day=chat.created_at.date(), chat_id=chat.pk, category=category,
        )  # fmt: skip
    assert totals(webhook_org)["billable"] == {"utility": 1}
    assert BilledMessage.objects.get().category == "utility"


def waiting_for_a_lock() -> None:
    """Return once a backend of the test database waits for a lock (at most 5 s)."""
    query = (
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(query)
            if cursor.fetchone()[0]:
                return
        time.sleep(0.01)
    raise AssertionError("no backend waited for a lock")


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_take_that_waited_for_another_goes_on_to_the_next_increments(webhook_org):
    # A fold stops when it takes nothing: that must mean nothing is left, also when
    # another fold took the first rows it wanted meanwhile (a read beside the worker).
    chat = send(webhook_org, wam_id="wamid.A1")
    fold()
    Increment.objects.bulk_create(
        Increment(
            organization_id=webhook_org.pk, number_id=chat.number_id,
            day=chat.created_at.date(), inbound=1,
        )
        for _ in range(5)
    )  # fmt: skip
    first_taken, go_on = threading.Event(), threading.Event()
    taken: dict[str, int] = {}

    def first() -> None:
        with transaction.atomic():
            taken["first"] = len(take_increments(webhook_org.pk, 3))
            first_taken.set()
            go_on.wait(5)
        connections.close_all()

    def second() -> None:
        first_taken.wait(5)
        with transaction.atomic():
            taken["second"] = len(take_increments(webhook_org.pk, 3))
        connections.close_all()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    waiting_for_a_lock()  # the second, for the first's rows
    go_on.set()
    for thread in threads:
        thread.join()
    assert taken == {"first": 3, "second": 2}


# A worker process that has taken increments in its fold's transaction, then dies.
TAKE_AND_HANG = """
import time
import django
django.setup()
from django.db import transaction
from analytics.queries import take_increments
with transaction.atomic():
    print(len(take_increments(None, 100)), flush=True)
    time.sleep(60)
"""


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_in_the_middle_of_a_fold_loses_nothing(webhook_org, tmp_path):
    send(webhook_org, wam_id="wamid.A1")
    deliver(webhook_org, envelope(text_message("hi", wam_id="wamid.IN1")))
    appended = Increment.objects.count()
    worker = subprocess.Popen(
        [sys.executable, "-c", TAKE_AND_HANG],
        cwd=ROOT,
        env=environment(tmp_path, DJANGO_SETTINGS_MODULE="messaging_project.settings"),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert int(worker.stdout.readline()) == appended  # taken, not committed
    finally:
        worker.kill()  # SIGKILL: no rollback of its own, the server's only
        worker.wait()
        worker.stdout.close()
    assert fold() == appended  # waits for the dead backend's locks, then takes them all
    assert totals(webhook_org) == {
        **totals(OrganizationFactory()), "outbound": 1, "inbound": 1,
    }  # fmt: skip
    assert Awaiting.objects.count() == 1


# The chats statuses moved (Chat.counted_status) ---------------------------------------


def moved_chat(organization, wam_id: str, name: str = "sent", **extra) -> Chat:
    send(organization, wam_id=wam_id)
    deliver(organization, envelope(statuses(status(wam_id, name, 100, **extra))))
    return Chat.objects.get(wam_id=wam_id)


@pytest.mark.parametrize("chats", [2, 3, 4, 7])
def test_a_fold_counts_every_moved_chat_whatever_the_batch(webhook_org, chats, monkeypatch):
    monkeypatch.setattr(folding, "BATCH", 3)
    for n in range(chats):
        moved_chat(webhook_org, f"wamid.M{n}", pricing=MARKETING)
    assert folding.fold_moves(None) == chats
    assert not Chat.objects.filter(counted_status__isnull=False).exists()
    assert totals(webhook_org)["sent"] == chats
    assert totals(webhook_org)["billable"] == {"marketing": chats}
    assert folding.fold_moves(None) == 0


def test_a_chat_is_marked_once_while_it_waits_for_the_fold(webhook_org):
    chat = moved_chat(webhook_org, "wamid.K1")
    deliver(webhook_org, envelope(statuses(status("wamid.K1", "delivered", 101))))
    assert list(MovedChat.objects.values_list("chat_id", "organization_id")) == [
        (chat.pk, webhook_org.pk)
    ]
    assert folding.fold_moves(webhook_org.pk) == 1
    assert not MovedChat.objects.exists()
    deliver(webhook_org, envelope(statuses(status("wamid.K1", "read", 102))))
    assert list(MovedChat.objects.values_list("chat_id", flat=True)) == [chat.pk]
    assert folding.fold_moves(None) == 1
    assert totals(webhook_org)["read"] == 1


def test_a_chat_deleted_takes_its_mark_with_it(webhook_org):
    chat = moved_chat(webhook_org, "wamid.K2")
    chat.delete()
    assert not MovedChat.objects.exists()
    assert folding.fold_moves(None) == 0


def test_a_mark_whose_chat_is_in_step_is_dropped_uncounted(webhook_org):
    chat = moved_chat(webhook_org, "wamid.K3")
    Chat.objects.filter(pk=chat.pk).update(counted_status=None)  # as if folded, mark left
    assert folding.fold_moves(None) == 0
    assert not MovedChat.objects.exists()
    assert totals(webhook_org)["sent"] == 0


@on_postgresql
def test_a_status_moving_a_chat_changes_none_of_its_indexes(webhook_org):
    """No index of the chat reads counted_status, so PostgreSQL can write a status's move
    within the chat's page (a heap-only update), adding no index entry."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = %s", [Chat._meta.db_table]
        )
        definitions = [row[0] for row in cursor.fetchall()]
    assert definitions and not [d for d in definitions if "counted_status" in d]
    send(webhook_org, wam_id="wamid.K4")
    hot = "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = %s"
    with connection.cursor() as cursor:
        cursor.execute(hot, [Chat._meta.db_table])
        before = cursor.fetchone()
        deliver(webhook_org, envelope(statuses(status("wamid.K4", "sent", 100))))
        cursor.execute(hot, [Chat._meta.db_table])
        updates, heap_only = (a - b for a, b in zip(cursor.fetchone(), before, strict=True))
    assert Chat.objects.get(wam_id="wamid.K4").status == ChatStatus.SENT
    assert updates >= 1 and heap_only == updates


@pytest.mark.django_db(transaction=True)  # the fold's own transaction, rolled back
def test_a_fold_that_fails_counts_no_moved_chat(webhook_org, monkeypatch):
    moved_chat(webhook_org, "wamid.M1", pricing=MARKETING)
    folding.fold_increments(webhook_org.pk)  # the send's count, so that only the move is left
    lose_the_connection_after(
        monkeypatch, "fold_moves_batch" if connection.vendor == "postgresql" else "count_moves"
    )
    with pytest.raises(RuntimeError):
        folding.fold_moves(None)
    assert Chat.objects.get(wam_id="wamid.M1").counted_status == ChatStatus.ACCEPTED
    assert DailyMessages.objects.get().sent == 0
    assert not BilledMessage.objects.exists()
    monkeypatch.undo()
    assert totals(webhook_org)["sent"] == 1
    assert totals(webhook_org)["billable"] == {"marketing": 1}


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_fold_leaves_a_chat_being_moved_and_a_read_counts_it_as_committed(webhook_org):
    # A status webhook holds the chat (moving it on from `sent`) when the worker folds and
    # staff read: neither waits; the read counts the chat as it was committed, once.
    chat = moved_chat(webhook_org, "wamid.M1", pricing=MARKETING)
    folding.fold_increments(None)
    with held_by_a_webhook(chat):
        assert fold() == 0  # the chat left for the next fold, without waiting for it
        during = totals(webhook_org)
        assert (during["sent"], during["delivered"]) == (1, 0)
        assert during["billable"] == {"marketing": 1}
        assert not BilledMessage.objects.exists()  # counted by the read, not claimed
    after = totals(webhook_org)
    assert (after["sent"], after["delivered"], after["billable"]) == (1, 1, {"marketing": 1})
    assert Chat.objects.get(pk=chat.pk).counted_status is None


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_status_that_waited_for_a_fold_marks_its_chat_again(webhook_org):
    # The fold holds the chat (its mark deleted, not committed) when a status webhook moves
    # it on: the webhook waits for the fold's commit, then marks the chat afresh.
    chat = moved_chat(webhook_org, "wamid.R1")
    folded, commit = threading.Event(), threading.Event()

    def fold_holding_the_chat() -> None:
        with transaction.atomic():
            assert folding.fold_moves_batch(None, 100) == 1
            folded.set()
            commit.wait(10)
        connections.close_all()

    def webhook() -> None:
        deliver(webhook_org, envelope(statuses(status("wamid.R1", "delivered", 101))))
        connections.close_all()

    folder, moving = (
        threading.Thread(target=fold_holding_the_chat),
        threading.Thread(target=webhook),
    )
    folder.start()
    assert folded.wait(5)
    moving.start()
    moving.join(0.5)
    assert moving.is_alive()  # waiting for the fold's lock on the chat
    commit.set()
    folder.join()
    moving.join()
    assert list(MovedChat.objects.values_list("chat_id", flat=True)) == [chat.pk]
    assert folding.fold_moves(None) == 1
    assert (totals(webhook_org)["sent"], totals(webhook_org)["delivered"]) == (1, 1)
    assert not MovedChat.objects.exists()


# A worker process that has counted moved chats in its fold's transaction, then dies.
COUNT_AND_HANG = """
import time
import django
django.setup()
from django.db import transaction
from analytics.queries import fold_moves_batch
with transaction.atomic():
    print(fold_moves_batch(None, 100), flush=True)
    time.sleep(60)
"""


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_while_counting_moved_chats_loses_nothing(webhook_org, tmp_path):
    for n in range(3):
        moved_chat(webhook_org, f"wamid.M{n}", pricing=MARKETING)
    worker = subprocess.Popen(
        [sys.executable, "-c", COUNT_AND_HANG],
        cwd=ROOT,
        env=environment(tmp_path, DJANGO_SETTINGS_MODULE="messaging_project.settings"),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert int(worker.stdout.readline()) == 3  # counted, not committed
    finally:
        worker.kill()  # SIGKILL: no rollback of its own, the server's only
        worker.wait()
        worker.stdout.close()
    # The dead backend's locks go with it; the marks and the rollup are as before.
    assert Chat.objects.filter(counted_status__isnull=False).count() == 3
    deadline = time.monotonic() + 10
    while folding.fold_moves(None) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)  # until the server has seen the backend die
    assert totals(webhook_org)["sent"] == 3
    assert totals(webhook_org)["billable"] == {"marketing": 3}
    assert BilledMessage.objects.count() == 3
