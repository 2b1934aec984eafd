"""The API's periodic clean-up: idempotency keys past their lifetime.

The workers enqueue it (messaging_project/worker/schedule.py); it is idempotent, so
running it twice, or two at once, deletes nothing more than once.
"""

from datetime import timedelta

from django.utils import timezone
from django_tasks import task

from messaging_project.api.idempotency import LIFETIME
from messaging_project.api.models import IdempotencyKey
from messaging_project.worker.schedule import every


@every(timedelta(hours=1))
@task()
def purge_idempotency_keys() -> int:
    """Idempotency keys past their 24 hours: a request with one runs afresh anyway."""
    deleted, _ = IdempotencyKey.objects.filter(created_at__lt=timezone.now() - LIFETIME).delete()
    return deleted
