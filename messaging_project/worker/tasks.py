"""The worker's periodic clean-ups: what would otherwise grow without bound.

The workers enqueue them (messaging_project/worker/schedule.py); each is idempotent, so
running one twice, or two at once, deletes nothing more than once.
"""

from datetime import timedelta
from importlib import import_module

from django.conf import settings
from django.utils import timezone
from django_tasks import task
from django_tasks_db.models import DBTaskResult

from messaging_project.worker.models import PeriodicRun, WorkerHeartbeat
from messaging_project.worker.schedule import every

# Schedule rows and dead workers' rows are kept this long, for looking back at them.
BOOKKEEPING_KEPT = timedelta(days=2)


@every(timedelta(hours=1))
@task()
def prune_task_results() -> int:
    """Finished tasks older than TASK_RESULTS_KEPT_DAYS (waiting and running ones stay)."""
    kept = timedelta(days=settings.TASK_RESULTS_KEPT_DAYS)
    _, deleted = (
        DBTaskResult.objects.finished().filter(finished_at__lt=timezone.now() - kept).delete()
    )
    return deleted.get(DBTaskResult._meta.label, 0)  # not counting their TaskOrganization


@every(timedelta(days=1))
@task()
def purge_expired_sessions() -> None:
    """Admin sessions past their expiry, as `manage.py clearsessions` does."""
    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()


@every(timedelta(days=1))
@task()
def purge_bookkeeping() -> int:
    """The scheduler's past periods and the rows of workers long gone."""
    cutoff = timezone.now() - BOOKKEEPING_KEPT
    runs, _ = PeriodicRun.objects.filter(period__lt=cutoff).delete()
    workers, _ = WorkerHeartbeat.objects.filter(last_seen__lt=cutoff).delete()
    return runs + workers
