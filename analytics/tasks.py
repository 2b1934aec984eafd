"""The analytics app's background work: the increments folded into the rollup."""

from datetime import timedelta

from django_tasks import task

from analytics.folding import fold
from messaging_project.worker.schedule import every


@every(timedelta(minutes=1))
@task()
def fold_increments() -> int:
    """Every organization's increments added to the rollup: reads fold their own
    organization's anyway, this keeps the increments a minute's worth at most."""
    return fold()
