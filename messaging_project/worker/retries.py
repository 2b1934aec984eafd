"""Retrying a task later: exponential backoff with jitter, a bounded number of times.

Django's Tasks API retries nothing by itself. A task that failed for a reason worth
retrying (the channel timed out, answered 5xx or throttled us) enqueues its next
attempt with `run_after`, in the same transaction as the record of the failure:

    if attempt < settings.TASK_MAX_ATTEMPTS:
        retry_later(send_auto_reply, auto_reply.pk, attempt=attempt)

The n-th retry waits between half and all of TASK_RETRY_DELAY x 2^(n-1) seconds (at
most an hour): the delays grow, and the jitter spreads the retries of many tasks that
failed together (a WhatsApp outage) instead of sending them back all at once.
"""

import random
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

MAX_DELAY = timedelta(hours=1)


def retry_delay(attempt: int) -> timedelta:
    """How long to wait after the `attempt`-th attempt failed (1 for the first)."""
    ceiling = min(
        timedelta(seconds=settings.TASK_RETRY_DELAY * 2 ** min(attempt - 1, 30)), MAX_DELAY
    )
    return ceiling * random.uniform(0.5, 1.0)  # jitter, not a secret


def retry_later(task: Any, *args: Any, attempt: int, **kwargs: Any):
    """Enqueue `task(*args, **kwargs)` again, after the delay for `attempt`."""
    return task.using(run_after=timezone.now() + retry_delay(attempt)).enqueue(*args, **kwargs)
