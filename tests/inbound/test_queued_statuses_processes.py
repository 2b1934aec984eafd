"""Queued statuses on PostgreSQL with real concurrency: two appliers at once, a worker
process that applies them within the 2 s the docs promise, and one killed mid-batch."""

import threading
import time

import pytest
from django.db import connection, connections

from inbound import queued_statuses
from inbound.models import QueuedStatuses
from messaging_project.worker.models import WorkerHeartbeat
from sending.models import Chat, ChatStatusEvent
from tests.channel import set_channel
from tests.factories import OrganizationFactory
from tests.inbound.conftest import APP_SECRET, deliver, envelope, status, statuses
from tests.sending.factories import ChatFactory
from tests.tasks.processes import environment, start_worker, stop, wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrency on one PostgreSQL"),
]

NAMES = ("sent", "delivered", "read")


@pytest.fixture
def queued(settings):
    settings.WHATSAPP_STATUSES_QUEUED = True


def organization_with_chats(count: int, prefix: str):
    organization = OrganizationFactory()
    set_channel(organization, app_secret=APP_SECRET)
    for n in range(count):
        ChatFactory(organization=organization, wam_id=f"wamid.{prefix}{n}")
    return organization


@pytest.mark.parametrize("by_chat", [False, True], ids=["by-status", "by-chat"])
def test_two_appliers_at_once_apply_each_status_once(queued, by_chat):
    """by-chat: each chat's statuses come one after another, so every batch applies
    deliveries of one message in turn (rounds) while the other applier holds ids too."""
    first = organization_with_chats(20, "a")
    second = organization_with_chats(20, "b")
    order = (
        [(t, n) for n in range(20) for t in range(3)]
        if by_chat
        else [(t, n) for t in range(3) for n in range(20)]
    )
    for t, n in order:
        for organization, prefix in ((first, "a"), (second, "b")):
            item = status(f"wamid.{prefix}{n}", NAMES[t], 100 + t)
            deliver(organization, envelope(statuses(item)))
    deliver(first, envelope(statuses(status("wamid.a0", "read", 102))))  # again
    errors: list[BaseException] = []
    applied: list[int] = []

    def drain():
        try:
            while taken := queued_statuses.apply_queued_statuses(limit=7):
                applied.append(taken)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=drain) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert sum(applied) == 121
    assert not QueuedStatuses.objects.exists()
    assert set(Chat.objects.values_list("status", flat=True)) == {"read"}
    assert ChatStatusEvent.objects.count() == 120  # the repeated one stored once


def test_a_worker_process_applies_them_within_two_seconds(queued, tmp_path):
    organization = organization_with_chats(3, "w")
    env = environment(tmp_path, WHATSAPP_STATUSES_QUEUED="true")
    worker = start_worker(env, tmp_path / "worker.log", "--worker-id", "statuses")
    try:
        wait_until(lambda: WorkerHeartbeat.objects.filter(worker_id="statuses").exists())
        for n in range(3):
            posted = time.monotonic()
            deliver(organization, envelope(statuses(status(f"wamid.w{n}", "delivered", 100))))
            chat = Chat.objects.get(wam_id=f"wamid.w{n}")
            while chat.status != "delivered":
                assert time.monotonic() - posted < 2, "not applied within 2 s"
                time.sleep(0.02)
                chat.refresh_from_db()
    finally:
        assert stop(worker) == 0


def test_a_worker_killed_mid_batch_leaves_the_batch_to_the_next(queued, tmp_path):
    organization = organization_with_chats(2, "k")
    for n in range(2):
        deliver(organization, envelope(statuses(status(f"wamid.k{n}", "delivered", 100))))
    # Another connection holds a chat: the worker's batch waits on it, half applied.
    blocker = connections.create_connection("default")
    blocker.set_autocommit(False)
    with blocker.cursor() as cursor:
        cursor.execute("SELECT id FROM sending_chat WHERE wam_id = 'wamid.k1' FOR UPDATE")
    env = environment(tmp_path, WHATSAPP_STATUSES_QUEUED="true")
    log = tmp_path / "workers.log"
    first = start_worker(env, log, "--worker-id", "first")
    try:
        wait_until(waiting_on_the_chat, what="the batch waiting on the held chat")
    finally:
        first.kill()  # SIGKILL: its transaction is rolled back with its connection
        first.wait(10)
    blocker.rollback()
    blocker.close()
    assert QueuedStatuses.objects.count() == 2
    assert not ChatStatusEvent.objects.exists()

    second = start_worker(env, log, "--worker-id", "second")
    try:
        wait_until(lambda: not QueuedStatuses.objects.exists(), what="the batch applied")
    finally:
        assert stop(second) == 0
    assert set(Chat.objects.values_list("status", flat=True)) == {"delivered"}
    assert ChatStatusEvent.objects.count() == 2


def waiting_on_the_chat() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND query LIKE '%%sending_chat%%' AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0] > 0
