"""Turns among organizations: one organization's backlog of tasks does not hold up
another's.

A task enqueued for an organization (`enqueue_in_turn`) gets a priority within the band
of its kind of work (priorities.py) that says how many tasks of that organization
already wait in that band: the first waiting one is at the top of the band, the second
one level lower, and so on for `LEVELS` levels. The claim takes the highest priority
first, then the oldest, so each organization's first waiting task goes before any
organization's second, every second before any third, and a backlog deeper than the
band waits at its bottom in arrival order. An organization that floods the queue with
a thousand auto-replies, or starts ten campaigns, delays another's next task by one
turn, not by its whole backlog.

Which organization a task is for is kept beside it (TaskOrganization): django_tasks_db's
row has no place for it.
"""

from typing import Any

from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from messaging_project.worker.models import TaskOrganization

# Levels of a band; the bands (BULK, the default, INTERACTIVE) are ten apart, so the
# levels of one never reach the next.
LEVELS = 9


def band(priority: int) -> tuple[int, int]:
    """The lowest and highest priority of the band of a task whose own is `priority`."""
    return priority, priority + LEVELS - 1


def waiting(organization_id: int, priority: int) -> int:
    """How many of the organization's tasks wait, ready, in `priority`'s band (counted
    up to the band's depth: a backlog of thousands costs no more than one of nine)."""
    return DBTaskResult.objects.filter(
        status=TaskResultStatus.READY,
        priority__range=band(priority),
        organization__organization_id=organization_id,
    )[: LEVELS - 1].count()


def turn_priority(priority: int, waiting_before: int) -> int:
    """The priority of a task of `priority` with `waiting_before` of its organization's
    tasks waiting ahead of it in its band."""
    return priority + LEVELS - 1 - min(waiting_before, LEVELS - 1)


def enqueue_in_turn(task: Any, organization_id: int, *args: Any, **kwargs: Any):
    """Enqueue `task(*args, **kwargs)` for the organization, in its turn (the task's
    result). A retry (retries.py) goes in at the bottom of its band, after its delay."""
    priority = turn_priority(task.priority, waiting(organization_id, task.priority))
    result = task.using(priority=priority).enqueue(*args, **kwargs)
    TaskOrganization.objects.create(task_id=result.id, organization_id=organization_id)
    return result
