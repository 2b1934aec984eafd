"""One number's rate shared through the database, on SQLite and on PostgreSQL alike:
senders that take turns at once (threads, each with its own connection) and two worker
processes sending two campaigns from one number never put more than the number's rate
into one second. Counted where the messages arrive, at the Cloud API stand-in."""

import threading
from datetime import timedelta

import pytest
from django.db import connection

from business_numbers.models import Number
from campaigns import services
from campaigns.models import RecipientStatus
from campaigns.pacing import ensure_pace, interval, take_turns
from tests.campaigns.conftest import TEMPLATE
from tests.campaigns.test_postgres import (
    busiest_second,
    counts,
    two_workers,
    wait_completed,
    worker_env,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_turns_taken_at_once_by_many_senders_never_overlap(org_a):
    number_id = Number.objects.default_for(org_a).pk
    ensure_pace(number_id=number_id)
    taken: list = []
    lock = threading.Lock()

    def sender() -> None:
        try:
            for _ in range(10):
                turns = take_turns(number_id=number_id, rate=1000, count=5)
                with lock:
                    taken.extend(turns)
        finally:
            connection.close()

    threads = [threading.Thread(target=sender) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert len(taken) == len(set(taken)) == 6 * 10 * 5
    turns = sorted(taken)
    step = interval(1000)
    # A sender that came after a pause starts from the clock, so gaps may be longer;
    # never shorter than one interval.
    assert all(
        b - a >= step - timedelta(microseconds=1) for a, b in zip(turns, turns[1:], strict=False)
    )


@pytest.mark.slow
def test_two_workers_sending_two_campaigns_from_one_number_share_its_rate(
    cloud_org, graph, tmp_path, settings, stand_in
):
    settings.CAMPAIGN_SENDERS = 2
    env = worker_env(tmp_path, graph, stand_in.url, threads=8)  # (threads_for(20), two senders)
    log = tmp_path / "workers.log"
    # Two tasks at a time each: four sender tasks, two for each worker.
    with two_workers(env, log, threads=2) as codes:
        campaigns = [
            services.create_campaign(
                organization=cloud_org,
                name=name,
                template=TEMPLATE,
                phones=[f"+49151{n:02d}{m:06d}" for m in range(60)],
                rate=20,
            )
            for n, name in enumerate(("spring", "summer"))
        ]
        wait_completed(*campaigns)

    assert codes == [0, 0], log.read_text()[-3000:]
    to = [to for to, _ in stand_in.arrivals()]
    assert len(to) == len(set(to)) == 120
    for campaign in campaigns:
        assert counts(campaign) == {RecipientStatus.SENT: 60}
    senders = {
        worker
        for campaign in campaigns
        for worker in campaign.recipients.values_list("claimed_by", flat=True)
    }
    assert senders == {"w0", "w1"}, log.read_text()[-3000:]
    # Both campaigns draw on the number's one schedule: 20 a second together, not 40,
    # even when a worker stalls (its late messages take fresh turns).
    arrivals = [at for _, at in stand_in.arrivals()]
    assert busiest_second(arrivals) <= 20, sorted(arrivals)
    assert (len(arrivals) - 1) / (max(arrivals) - min(arrivals)) <= 20
