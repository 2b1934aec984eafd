"""The delivery queue with real worker processes on PostgreSQL: a worker killed while
it posts, and two workers draining the same deliveries. Counted at a real receiver."""

import json
import time

import pytest
from django.db import connection, transaction
from django.utils import timezone

from events import services
from events.models import Delivery, DeliveryStatus
from messaging_project.worker.models import WorkerHeartbeat
from tests.factories import OrganizationFactory
from tests.tasks.processes import environment, start_worker, stop, wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="real processes against one PostgreSQL"
    ),
]


def worker_env(tmp_path):
    return environment(tmp_path, WEBHOOK_ALLOW_PRIVATE_URLS="true", WEBHOOK_TIMEOUT="10")


def all_posted(receiver, count: int, timeout: float = 30) -> None:
    """Wait for `count` requests at the receiver and every outcome recorded, then a
    moment more, in which anything posted twice would arrive."""
    assert receiver.wait_for(count, timeout=timeout), len(receiver.requests)
    wait_until(
        lambda: not Delivery.objects.filter(status=DeliveryStatus.PENDING).exists(),
        what="the outcomes recorded",
    )
    time.sleep(1)


def emit_numbered(organization, count: int) -> None:
    for n in range(count):
        services.emit_event(organization_id=organization.pk, event="group.created", data={"n": n})


def numbers_posted(receiver) -> list[int]:
    return sorted(json.loads(r.body)["data"]["n"] for r in receiver.requests)


def three_events_and_their_table_locked(receiver, tmp_path):
    """Three events for the receiver, and another connection holding the deliveries'
    table, so that a fan-out's insert must wait: the worker's environment, its log and
    that connection (roll it back to let the insert through)."""
    from django.db import connections

    organization = OrganizationFactory()
    services.create_endpoint(organization=organization, url=receiver.url)
    emit_numbered(organization, 3)
    blocker = connections.create_connection("default")
    blocker.set_autocommit(False)
    with blocker.cursor() as cursor:
        cursor.execute("LOCK TABLE events_delivery IN EXCLUSIVE MODE")
    return worker_env(tmp_path), tmp_path / "workers.log", blocker


def fan_out_backend(*, waiting: bool) -> int | None:
    """A backend running a fan-out (the statement that inserts the deliveries): one
    waiting on that lock, or (`waiting` False) one still at it, waiting or not."""
    condition = "wait_event_type = 'Lock'" if waiting else "state = 'active'"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT pid FROM pg_stat_activity WHERE {condition} AND pid <> pg_backend_pid() "
            "AND query LIKE '%%INSERT INTO \"events_delivery\"%%'"
        )
        row = cursor.fetchone()
    return row[0] if row else None


def fan_out_waiting() -> int | None:
    return fan_out_backend(waiting=True)


def test_a_worker_killed_while_posting_leaves_the_attempt_to_another_after_its_lease(
    receiver, tmp_path
):
    receiver.delay = 3  # the first worker is killed while the receiver takes its time
    organization = OrganizationFactory()
    services.create_endpoint(organization=organization, url=receiver.url)
    services.emit_event(organization_id=organization.pk, event="group.created", data={"n": 1})
    log = tmp_path / "workers.log"
    env = worker_env(tmp_path)

    first = start_worker(env, log, "--worker-id", "first")
    try:
        wait_until(
            lambda: Delivery.objects.filter(claimed_until__isnull=False).exists(),
            what="the first worker's fan-out and claim",
        )
        [delivery] = Delivery.objects.all()
        time.sleep(1)  # its POST is out (loopback), the answer 2 s away
    finally:
        first.kill()  # SIGKILL: no chance to record anything
        first.wait(10)
    receiver.delay = 0
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.PENDING, 1)

    second = start_worker(env, log, "--worker-id", "second")
    try:
        wait_until(lambda: WorkerHeartbeat.objects.filter(worker_id="second").exists())
        time.sleep(2)  # the lease holds: the second worker leaves it alone
        assert Delivery.objects.get().status == DeliveryStatus.PENDING
        assert receiver.wait_for(1, timeout=5)  # the first worker's POST, answered late
        assert len(receiver.requests) == 1
        # The lease (2 x WEBHOOK_TIMEOUT + 30 s) runs out.
        Delivery.objects.update(claimed_until=timezone.now())
        wait_until(
            lambda: Delivery.objects.get().status == DeliveryStatus.SUCCEEDED,
            what="the second worker's attempt",
        )
    finally:
        assert stop(second) == 0, log.read_text()[-3000:]

    # Posted again (at least once), with the same webhook-id and body.
    assert len(receiver.requests) == 2
    assert {r.headers["webhook-id"] for r in receiver.requests} == {delivery.msg_id}
    assert len({r.body for r in receiver.requests}) == 1
    delivery.refresh_from_db()
    assert (delivery.attempts, delivery.response_status) == (1, 200)


def test_two_workers_drain_five_hundred_deliveries_each_posted_once(receiver, tmp_path):
    receiver.delay = 0.005
    organization = OrganizationFactory()
    for n in range(5):
        services.create_endpoint(organization=organization, url=f"{receiver.url}?{n}")
    log = tmp_path / "workers.log"
    env = worker_env(tmp_path)
    workers = [start_worker(env, log, "--worker-id", f"w{n}") for n in range(2)]
    try:
        wait_until(lambda: WorkerHeartbeat.objects.count() == 2, what="two workers")
        with transaction.atomic(), services.event_batch():  # all at once: they race
            for n in range(100):
                services.emit_event(
                    organization_id=organization.pk, event="group.created", data={"n": n}
                )
        all_posted(receiver, 500, timeout=120)
    finally:
        codes = [stop(worker) for worker in workers]

    assert codes == [0, 0], log.read_text()[-3000:]
    assert len(receiver.requests) == 500
    ids = {r.headers["webhook-id"] for r in receiver.requests}
    assert ids == set(Delivery.objects.values_list("msg_id", flat=True))
    assert set(Delivery.objects.values_list("status", "attempts")) == {
        (DeliveryStatus.SUCCEEDED, 1)
    }


def test_a_worker_killed_inside_its_fan_out_loses_and_doubles_nothing(receiver, tmp_path):
    """The first worker is killed (SIGKILL) while its fan-out waits on a lock. The
    fan-out is one statement, whose backend learns of the death only when it answers:
    it runs the statement to its end (seen directly and through PgBouncer); a connection
    cut first rolls it back whole (the next test). Never half; the next worker posts
    each delivery once."""
    from events.models import Emission

    env, log, blocker = three_events_and_their_table_locked(receiver, tmp_path)
    first = start_worker(env, log, "--worker-id", "first")
    try:
        wait_until(fan_out_waiting, what="the first worker's fan-out, blocked")
    finally:
        first.kill()
        first.wait(10)
        blocker.rollback()
        blocker.close()
    wait_until(
        lambda: fan_out_backend(waiting=False) is None, what="the killed worker's fan-out ended"
    )
    assert (Emission.objects.count(), Delivery.objects.count()) in {(3, 0), (0, 3)}

    second = start_worker(env, log, "--worker-id", "second")
    try:
        all_posted(receiver, 3)
    finally:
        assert stop(second) == 0, log.read_text()[-3000:]
    assert numbers_posted(receiver) == [0, 1, 2]
    assert not Emission.objects.exists()


def test_a_connection_lost_inside_the_fan_out_is_recovered_by_the_same_worker(receiver, tmp_path):
    """The database drops the worker's connection (pg_terminate_backend, as a failover
    would) while its fan-out waits: the transaction is gone, the worker logs it, opens
    a new connection and fans the same emissions out again, each once."""
    from events.models import Emission

    env, log, blocker = three_events_and_their_table_locked(receiver, tmp_path)
    worker = start_worker(env, log, "--worker-id", "survivor")
    try:
        try:
            wait_until(fan_out_waiting, what="the worker's fan-out, blocked")
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(%s)", [fan_out_waiting()])
            wait_until(lambda: fan_out_waiting() is None, what="its backend gone")
            assert Emission.objects.count() == 3 and not Delivery.objects.exists()
        finally:
            blocker.rollback()
            blocker.close()
        all_posted(receiver, 3)
        assert worker.poll() is None  # the same process carried on
    finally:
        assert stop(worker) == 0, log.read_text()[-3000:]
    assert "the database is unreachable" in log.read_text()
    assert numbers_posted(receiver) == [0, 1, 2]
    assert not Emission.objects.exists()
