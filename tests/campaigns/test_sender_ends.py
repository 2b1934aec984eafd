"""A sender's end: recipients still pending go to a new sender unless another one of
the campaign may still claim them, and of two senders ending together the later one
sends them (campaigns/sender.py, `end_of_sender`; campaigns/tasks.py, `end_sender`)."""

import pytest
from django_tasks_db.models import DBTaskResult

from campaigns.models import Campaign, EndedSender, Recipient, RecipientStatus
from campaigns.sender import end_of_sender
from campaigns.tasks import end_sender, resume_campaigns, senders
from tests.campaigns.test_sending import PHONES, create
from tests.databases import on_postgresql
from tests.numbers.test_races import at_once


def two_running_senders(api, settings) -> tuple[Campaign, list]:
    """A campaign with its recipients pending and its two sender tasks running."""
    settings.CAMPAIGN_SENDERS = 2
    campaign = Campaign.objects.get(uuid=create(api, phones=PHONES))
    tasks = list(senders(campaign.pk).values_list("id", flat=True))
    DBTaskResult.objects.filter(id__in=tasks).update(status="RUNNING")
    return campaign, tasks


def ending(campaign: Campaign, task_id, enqueued: list):
    return lambda: end_of_sender(
        campaign, enqueued.append, lambda: end_sender(campaign.pk, task_id)
    )


@pytest.mark.django_db
def test_of_two_senders_ending_one_after_the_other_the_later_sends_the_rest(
    api, cloud_org, settings
):
    campaign, (first, second) = two_running_senders(api, settings)
    enqueued: list = []

    # The first sees the second still claiming; the second sees the first past its
    # claims, though its task still runs.
    assert ending(campaign, first, enqueued)() is True
    assert enqueued == []
    assert ending(campaign, second, enqueued)() is True
    assert enqueued == [campaign]
    # Both are remembered while their tasks run, and forgotten once they are over.
    assert set(EndedSender.objects.values_list("task_id", flat=True)) == {first, second}
    DBTaskResult.objects.filter(id=first).update(status="SUCCESSFUL")
    end_sender(campaign.pk, second)
    assert list(EndedSender.objects.values_list("task_id", flat=True)) == [second]


@pytest.mark.django_db
def test_a_sender_ending_with_nothing_pending_starts_none(api, cloud_org, settings):
    campaign, (first, second) = two_running_senders(api, settings)
    Recipient.objects.update(status=RecipientStatus.SENT)
    enqueued: list = []

    assert ending(campaign, first, enqueued)() is False
    assert ending(campaign, second, enqueued)() is False
    assert enqueued == []


@pytest.mark.django_db
def test_a_sender_ending_while_another_waits_to_start_leaves_the_rest_to_it(
    api, cloud_org, settings
):
    campaign, (first, second) = two_running_senders(api, settings)
    DBTaskResult.objects.filter(id=second).update(status="READY")
    enqueued: list = []

    assert ending(campaign, first, enqueued)() is True
    assert enqueued == []


@pytest.mark.django_db
def test_the_record_of_a_campaigns_last_sender_is_forgotten_once_its_task_is_over(
    api, cloud_org, settings
):
    campaign, (first, second) = two_running_senders(api, settings)
    Recipient.objects.update(status=RecipientStatus.SENT)
    for task_id in (first, second):
        ending(campaign, task_id, [])()
    DBTaskResult.objects.filter(id=first).update(status="SUCCESSFUL")

    resume_campaigns.call()
    assert list(EndedSender.objects.values_list("task_id", flat=True)) == [second]
    DBTaskResult.objects.filter(id=second).update(status="SUCCESSFUL")
    resume_campaigns.call()
    assert not EndedSender.objects.exists()


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_two_senders_ending_at_once_leave_the_rest_to_exactly_one(api, cloud_org, settings):
    """Without the campaign's row held, each read the other as still claiming, and the
    pending recipients waited for the minutely resume."""
    campaign, tasks = two_running_senders(api, settings)
    for _ in range(5):
        EndedSender.objects.all().delete()
        enqueued: list = []
        at_once(*(ending(campaign, task_id, enqueued) for task_id in tasks))
        assert enqueued == [campaign]
