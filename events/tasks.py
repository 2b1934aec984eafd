"""The events app's periodic task: pruning finished deliveries. Delivering them is not a
task: the Delivery rows are a queue of their own (events/delivery.py)."""

from datetime import timedelta

from django.utils import timezone
from django_tasks import task

from events.models import Delivery, DeliveryStatus
from messaging_project.worker.schedule import every

# Finished deliveries are kept this long for the deliveries list and the admin.
DELIVERIES_KEPT = timedelta(days=30)


@every(timedelta(days=1))
@task()
def prune_deliveries() -> int:
    """Deliveries finished (succeeded or failed) more than DELIVERIES_KEPT ago; pending
    ones stay whatever their age."""
    deleted, _ = Delivery.objects.filter(
        status__in=[DeliveryStatus.SUCCEEDED, DeliveryStatus.FAILED],
        updated_at__lt=timezone.now() - DELIVERIES_KEPT,
    ).delete()
    return deleted
