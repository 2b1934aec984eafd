"""`manage.py analytics_rebuild` while statuses and folds go on: the figures kept live
are the rollup and what the next fold adds, compared on one snapshot, and a repair adds
what a day lacks, so that a fold before or after it counts nothing twice."""

import threading

import pytest
from django.core.management import call_command
from django.db import connections, transaction

from analytics import rebuild
from analytics.folding import fold
from analytics.models import BilledMessage, DailyBillable, DailyMessages
from analytics.queries import hold_off_folds
from sending.models import Chat, ChatStatus
from tests.analytics.conftest import MARKETING, held_by_a_webhook, send, totals
from tests.databases import on_postgresql
from tests.inbound.conftest import deliver, envelope, status, statuses

pytestmark = pytest.mark.django_db


def post(organization, wam_id: str, name: str, at: int, **extra) -> None:
    deliver(organization, envelope(statuses(status(wam_id, name, at, **extra))))


def test_what_waits_for_the_fold_counts_as_kept(webhook_org):
    send(webhook_org, wam_id="wamid.A1")  # an increment, not folded
    post(webhook_org, "wamid.A1", "delivered", 100, pricing=MARKETING)  # a marked chat
    assert Chat.objects.get(wam_id="wamid.A1").counted_status == ChatStatus.ACCEPTED
    comparison = rebuild.compare_with_chats()
    assert not comparison.differences
    assert not DailyMessages.objects.exists()  # all of it was waiting
    call_command("analytics_rebuild", "--check")


def test_a_repair_adds_what_a_day_lacks_and_the_fold_adds_what_waits(webhook_org):
    send(webhook_org, wam_id="wamid.A1")
    send(webhook_org, wam_id="wamid.A2")
    post(webhook_org, "wamid.A1", "read", 100, pricing=MARKETING)
    fold()
    DailyMessages.objects.update(read=7, outbound=0)  # the day is wrong
    DailyBillable.objects.update(messages=5)
    post(webhook_org, "wamid.A2", "delivered", 200, pricing=MARKETING)  # waiting, not folded
    comparison = rebuild.compare_with_chats()
    assert comparison.differences.messages and comparison.differences.billable
    rebuild.repair(comparison)
    # The repair left the waiting move to the fold: the read counts it once.
    assert totals(webhook_org)["outbound"] == 2
    assert totals(webhook_org)["delivered"] == 2
    assert totals(webhook_org)["read"] == 1
    assert totals(webhook_org)["billable"] == {"marketing": 2}
    call_command("analytics_rebuild", "--check")


def billed_then_its_claim_lost(organization) -> None:
    """A message billed and folded, then its claim and count lost (a restore, a bug): the
    rebuilt figures bill it and nothing claims it."""
    send(organization, wam_id="wamid.A1")
    post(organization, "wamid.A1", "sent", 100, pricing=MARKETING)
    fold()
    BilledMessage.objects.all().delete()
    DailyBillable.objects.all().delete()


def test_a_message_billed_by_a_fold_after_the_snapshot_counts_once(webhook_org):
    billed_then_its_claim_lost(webhook_org)
    comparison = rebuild.compare_with_chats()
    assert comparison.differences.billable
    # Between the snapshot and the repair, a later status marks the chat and a fold
    # claims it: that fold counted it.
    post(webhook_org, "wamid.A1", "delivered", 200, pricing=MARKETING)
    fold()
    assert DailyBillable.objects.get().messages == 1
    rebuild.repair(comparison)
    assert totals(webhook_org)["billable"] == {"marketing": 1}
    call_command("analytics_rebuild", "--check")


def test_a_repair_claims_what_it_bills_so_no_later_status_bills_it_again(webhook_org):
    billed_then_its_claim_lost(webhook_org)
    call_command("analytics_rebuild")
    assert BilledMessage.objects.filter(chat__wam_id="wamid.A1").exists()
    post(webhook_org, "wamid.A1", "read", 300, pricing=MARKETING)
    assert totals(webhook_org)["billable"] == {"marketing": 1}
    call_command("analytics_rebuild", "--check")


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_chat_a_webhook_holds_neither_differs_nor_counts_twice_after_a_repair(webhook_org):
    """The fold leaves a chat a webhook holds (SKIP LOCKED). The check does not report
    it as a difference, and a repair meanwhile leaves its move to the next fold."""
    send(webhook_org, wam_id="wamid.A1")
    send(webhook_org, wam_id="wamid.A2")
    post(webhook_org, "wamid.A1", "sent", 100, pricing=MARKETING)  # marked, committed
    fold()
    post(webhook_org, "wamid.A1", "delivered", 200, pricing=MARKETING)  # marked again
    chat = Chat.objects.get(wam_id="wamid.A1")
    DailyMessages.objects.update(outbound=9)  # a day to repair
    with held_by_a_webhook(chat):
        comparison = rebuild.compare_with_chats()
        assert Chat.objects.get(pk=chat.pk).counted_status == ChatStatus.SENT
        assert [key[2] for key in comparison.differences.messages] == [chat.number_id]
        call_command("analytics_rebuild")  # it folds first: the chat is left, held
    expected = {"outbound": 2, "sent": 1, "delivered": 1, "billable": {"marketing": 1}}
    after = totals(webhook_org)
    assert {name: after[name] for name in expected} == expected
    call_command("analytics_rebuild", "--check")


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_fold_waits_while_a_repair_writes(webhook_org):
    """The repair adds to the rollup with no fold adding meanwhile: a fold that starts
    while a repair's transaction holds the lock waits for its commit, then folds."""
    send(webhook_org, wam_id="wamid.A1")  # an increment to fold
    repairing, release, folded = threading.Event(), threading.Event(), []

    def repair_in_flight() -> None:
        with transaction.atomic():
            hold_off_folds()
            repairing.set()
            release.wait(10)
        connections.close_all()

    def worker_fold() -> None:
        folded.append(fold())
        connections.close_all()

    repair = threading.Thread(target=repair_in_flight)
    repair.start()
    try:
        assert repairing.wait(5)
        folder = threading.Thread(target=worker_fold)
        folder.start()
        folder.join(1)
        assert folder.is_alive() and not folded  # waiting for the repair's lock
    finally:
        release.set()
        repair.join()
    folder.join(10)
    assert folded == [1]
    assert totals(webhook_org)["outbound"] == 1
