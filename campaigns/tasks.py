"""Campaigns' background tasks: a scheduled campaign's start, and its senders.

Both are idempotent: starting is conditional on the campaign still being scheduled, and
a sender only sends what it claims (campaigns/sender.py), so a task run twice, or two
senders at once, send each recipient at most once.
"""

from datetime import timedelta

from django_tasks import task

from messaging_project.worker.schedule import every


@task()
def start_scheduled_campaign(campaign_id: int) -> bool:
    """Fix the recipients and start sending, at the campaign's `scheduled_at`."""
    from campaigns.services import start_campaign

    return start_campaign(campaign_id=campaign_id)


@task(takes_context=True)
def send_campaign(context, campaign_id: int) -> str:
    """Send the campaign's pending recipients at its pace; its status when done."""
    from campaigns.sender import run_campaign

    worker_ids = context.task_result.worker_ids
    worker_id = worker_ids[-1] if worker_ids else "inline"
    return run_campaign(campaign_id=campaign_id, worker_id=worker_id)


@every(timedelta(minutes=1))
@task()
def resume_campaigns() -> int:
    """Running campaigns that no sender task is left for (every one failed): a new one
    each, which sends the rest and marks dead workers' claims unknown. How many."""
    from campaigns.services import resume_stalled_campaigns

    return resume_stalled_campaigns()
