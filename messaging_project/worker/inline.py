"""Running tasks in the calling thread, one after the other: for tests and commands."""

from messaging_project.worker.queues import run_queues
from messaging_project.worker.runner import Worker


def run_ready_tasks(*, worker_id: str = "inline", max_tasks: int | None = None) -> int:
    """Run the ready tasks in this thread, one after the other, and the registered
    queues' due work, until none is left (work they add included). How many tasks ran,
    plus the queues' items done (an event delivery attempted). For tests and commands."""
    worker = Worker(worker_id=worker_id, max_tasks=max_tasks)
    runner = worker.runner()
    ran = 0
    while True:
        while worker.run_one(runner):
            ran += 1
        done = run_queues(worker_id) if max_tasks is None else 0
        if not done:
            return ran
        ran += done


def run_task_now(result_id: str, *, worker_id: str = "inline") -> bool:
    """Run one task in this thread if it is still READY (a worker may have taken it
    already); whether it ran here."""
    worker = Worker(worker_id=worker_id)
    task_result = worker.claim(task_id=result_id)
    if task_result is None:
        return False
    worker.runner().run_task(task_result)
    return True
