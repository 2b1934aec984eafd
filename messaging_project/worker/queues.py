"""Queues of the apps' own: work kept in an app's rows rather than as tasks (the event
deliveries), drained by every worker process in a thread of its own.

An app registers its queue from its AppConfig.ready() (`register_queue`): the worker
imports no app.
"""

import threading
from typing import Protocol


class Queue(Protocol):
    """Work kept in an app's own rows, drained by every worker process."""

    name: str

    def serve(self, worker_id: str, stopping: threading.Event) -> None:
        """Drain the queue until `stopping` is set (then finish what is under way)."""

    def run_due(self, worker_id: str) -> int:
        """Do some of the work due now in this thread; how much (0: none is due)."""

    def backlog(self) -> str:
        """One line for `tasks_status`: what waits in the queue."""


QUEUES: list[Queue] = []


def register_queue(queue: Queue) -> None:
    """Have the workers drain `queue` too (once per name)."""
    if all(known.name != queue.name for known in QUEUES):
        QUEUES.append(queue)


def run_queues(worker_id: str) -> int:
    """Do the registered queues' due work in this thread until none is due; how much."""
    done = 0
    while progress := sum(queue.run_due(worker_id) for queue in QUEUES):
        done += progress
    return done
