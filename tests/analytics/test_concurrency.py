"""The figures under concurrent transactions (PostgreSQL): status webhooks, sends and
inbound messages of one organization and number at once, and folds running beside
them. The figures come out exact, and no transaction deadlocks (PostgreSQL would abort
one: a 500, or a send raising)."""

import random
import threading

import pytest
from django.core.management import call_command
from django.db import connection, connections

from analytics.folding import fold
from analytics.models import DailyMessages, Increment
from tests.analytics.conftest import MARKETING, send, totals
from tests.inbound.conftest import deliver, envelope, status, statuses, text_message

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs concurrent connections"),
]

CHATS = 12  # sent before the race; every status thread posts one status for each
STATUS_THREADS = ("sent", "delivered", "read", "failed")
SENDERS, SENDS_EACH = 2, 6
INBOUND_THREADS, MESSAGES_EACH = 2, 4


def failing(n: int) -> bool:
    """A third of the chats get a `failed` status (final, whatever came before)."""
    return n % 3 == 0


def status_deliveries(name: str) -> list[dict]:
    """One thread's deliveries of `name` for the chats, three statuses a delivery, in an
    order of its own; billable pricing on `sent` and `delivered`, as WhatsApp sends it."""
    order = list(range(CHATS))
    random.Random(name).shuffle(order)
    items = []
    for n in order:
        if name == "failed" and not failing(n):
            items.append(status(f"wamid.R{n}", "delivered", 200, pricing=MARKETING))
        elif name == "failed":
            items.append(status(f"wamid.R{n}", "failed", 250, errors=[{"code": 131026}]))
        else:
            times = {"sent": 100, "delivered": 200, "read": 300}
            pricing = {"pricing": MARKETING} if name != "read" else {}
            items.append(status(f"wamid.R{n}", name, times[name], **pricing))
    return [envelope(statuses(*items[i : i + 3])) for i in range(0, len(items), 3)]


# Each folds again and again while the others write: a read's fold of the organization,
# and the worker's of every organization (they take overlapping increments).
FOLDERS = (lambda organization: organization.pk, lambda organization: None)


def test_concurrent_statuses_sends_messages_and_folds_count_exactly(webhook_org):
    for n in range(CHATS):
        send(webhook_org, wam_id=f"wamid.R{n}")
    jobs = [lambda name=name: post_all(status_deliveries(name)) for name in STATUS_THREADS]
    jobs += [lambda s=s: send_all(s) for s in range(SENDERS)]
    jobs += [lambda t=t: post_all(messages(t)) for t in range(INBOUND_THREADS)]
    writers = len(jobs)
    jobs += [lambda scope=scope: fold_until_written(scope(webhook_org)) for scope in FOLDERS]
    barrier = threading.Barrier(len(jobs))
    answers: list[int] = []
    finished: list[object] = []
    failures: list[BaseException] = []

    def post_all(payloads: list[dict]) -> None:
        for payload in payloads:
            answers.append(deliver(webhook_org, payload).status_code)

    def send_all(sender: int) -> None:
        for n in range(SENDS_EACH):
            send(webhook_org, wam_id=f"wamid.S{sender}.{n}")

    def fold_until_written(organization_id: int | None) -> None:
        while len(finished) < writers:
            fold(organization_id)

    def messages(thread: int) -> list[dict]:
        return [
            envelope(
                text_message("hi", sender=f"49151000{thread}{n:03d}", wam_id=f"wamid.I{thread}.{n}")
            )
            for n in range(MESSAGES_EACH)
        ]

    def run(job) -> None:
        barrier.wait()
        try:
            job()
        except BaseException as error:  # a deadlock aborts a send with an exception
            failures.append(error)
        finally:
            if jobs.index(job) < writers:
                finished.append(job)
            connections.close_all()

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    assert answers == [200] * len(answers)
    assert len(answers) == len(STATUS_THREADS) * CHATS // 3 + INBOUND_THREADS * MESSAGES_EACH
    failed = sum(1 for n in range(CHATS) if failing(n))
    assert totals(webhook_org) == {
        "outbound": CHATS + SENDERS * SENDS_EACH,
        "sent": CHATS - failed,
        "delivered": CHATS - failed,
        "read": CHATS - failed,
        "failed": failed,
        "inbound": INBOUND_THREADS * MESSAGES_EACH,
        "billable": {"marketing": CHATS},  # every chat priced by several statuses, once
    }
    assert not Increment.objects.exists()
    assert DailyMessages.objects.count() == 1  # one day of one number
    call_command("analytics_rebuild", "--check")  # raises when they differ
