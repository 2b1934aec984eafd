"""The task worker: `manage.py db_worker`, the `worker:` process of the Procfile.

django_tasks_db stores the tasks and records how each run ended; this worker adds what
running them in production takes:

- **Threads.** One process runs up to TASK_WORKER_THREADS tasks at once (a task mostly
  waits on WhatsApp), each thread with its own database connection.
- **Claiming.** A thread takes the next ready task with `SELECT ... FOR UPDATE SKIP
  LOCKED` and marks it RUNNING in the same transaction (django_tasks_db's claim), so
  however many workers run, on however many machines, each task is taken once.
- **Waking.** On PostgreSQL a trigger NOTIFYs when tasks are inserted (the base's
  migration 0002), delivered when the inserting transaction commits, and an idle worker
  starts the task at once; otherwise, and for tasks deferred with `run_after`, it looks
  every `--interval` seconds. While every thread is busy a notification costs nothing
  (no count of the ready tasks): each thread looks for its next task as its task ends.
- **Heartbeats and recovery.** Each process writes its WorkerHeartbeat every few
  seconds. A task left RUNNING by a worker not heard from for TASK_WORKER_TIMEOUT
  seconds (killed, out of memory, its machine gone) is made READY again and another
  worker runs it: tasks run at least once, and are written to be idempotent. A task
  whose workers died under it TASK_MAX_ATTEMPTS times is marked FAILED instead, so one
  task that kills its worker cannot take every worker down in turn.
- **The schedule.** Each process enqueues the periodic clean-ups as their period begins
  (schedule.py): no cron.
- **A lost database** is logged and waited out; the worker does not exit, and a task
  whose claim or end it could not record runs again.
- **Other queues.** An app whose rows are a queue of their own (the event deliveries)
  registers it (`register_queue`, from its AppConfig.ready(): the base imports no app).
  Each process drains each registered queue in one more thread (the queue's `serve`,
  which looks for work as it sees fit), and `run_ready_tasks` drains them inline too.
"""

import contextlib
import logging
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from django.conf import settings
from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    close_old_connections,
    connections,
    router,
)
from django.utils import timezone
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.management.commands.db_worker import Worker as TaskRunner
from django_tasks_db.models import DBTaskResult, get_date_max
from django_tasks_db.utils import exclusive_transaction, is_locked_database_exception

from messaging_project.api import rows
from messaging_project.api.models import WorkerHeartbeat
from messaging_project.api.schedule import Scheduler

logger = logging.getLogger(__name__)

# The channel the trigger of migration base.0002 notifies when tasks are inserted.
CHANNEL = "messaging_tasks"

# The database went away or could not be reached: wait and try again.
LOST_DATABASE = (OperationalError, InterfaceError)
# How long an idle thread sleeps when nothing wakes it (the supervisor wakes it sooner);
# a thread idle that long closes its database connection.
IDLE_WAIT = 5.0
ABANDONED = (
    "{runs} runs of this task ended without a record of how (their worker was killed, "
    "or lost its machine or its database); it is not run again."
)


class TaskAbandoned(Exception):
    """Recorded as the error of a task whose workers kept dying while they ran it."""


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
# Seconds a thread holds the interpreter lock before another that wants it may run.
SWITCH_INTERVAL = 0.001


def register_queue(queue: Queue) -> None:
    """Have the workers drain `queue` too (once per name)."""
    if all(known.name != queue.name for known in QUEUES):
        QUEUES.append(queue)


def ready_tasks(backend_name: str = "default", queue_names=("default",), excluded=()):
    tasks = DBTaskResult.objects.ready().filter(backend_name=backend_name)
    if "*" not in queue_names:
        tasks = tasks.filter(queue_name__in=list(queue_names))
    if excluded:
        tasks = tasks.exclude(queue_name__in=list(excluded))
    return tasks


def claim_next(tasks, worker_id: str) -> DBTaskResult | None:
    """django_tasks_db's claim (lock, then mark, in one transaction) of the next of
    `tasks`; None when there is none. PostgreSQL claims in one statement (claim_ready)."""
    try:
        with exclusive_transaction(tasks.db):
            task_result = tasks.get_locked()
            if task_result is not None:
                task_result.claim(worker_id)
            return task_result
    except OperationalError as error:
        if is_locked_database_exception(error):  # SQLite: another writer; look again later
            return None
        raise


# django_tasks_db's claim on PostgreSQL, as one UPDATE ... RETURNING: the first ready
# task in its order (the ready index's), locked with SKIP LOCKED, marked RUNNING with the
# worker appended to worker_ids. One round trip instead of four, for every task and every
# look at an empty queue; written out, as the ORM's compiling cost more than the round
# trip (docs/performance.md, 2026-11-25).
CLAIM = """
    UPDATE {table} SET status = %s, started_at = %s,
        worker_ids = worker_ids || jsonb_build_array(%s::text)
    WHERE id = (
        SELECT id FROM {table}
        WHERE status = %s AND (run_after = %s OR run_after <= %s) AND backend_name = %s{only}
        ORDER BY priority DESC, run_after ASC, enqueued_at ASC
        LIMIT 1 FOR UPDATE SKIP LOCKED
    )
    RETURNING {columns}
"""


def claim_ready(
    worker_id: str,
    *,
    backend_name: str = "default",
    queue_names=("default",),
    excluded=(),
    task_id: str | None = None,
    using: str = "default",
) -> DBTaskResult | None:
    """On PostgreSQL: claim the next of ready_tasks(backend_name, queue_names, excluded)
    (only `task_id`, when given) for `worker_id`; None when none is ready."""
    connection = connections[using]
    now = timezone.now()
    only, params = "", []
    if "*" not in queue_names:
        only += " AND queue_name = ANY(%s)"
        params.append(list(queue_names))
    if excluded:
        only += " AND NOT queue_name = ANY(%s)"
        params.append(list(excluded))
    if task_id is not None:
        only += " AND id = %s"
        params.append(task_id)
    table = connection.ops.quote_name(DBTaskResult._meta.db_table)
    sql = CLAIM.format(table=table, only=only, columns=rows.columns(DBTaskResult, table))
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            [
                str(TaskResultStatus.RUNNING),
                now,
                worker_id,
                str(TaskResultStatus.READY),
                get_date_max(),
                now,
                backend_name,
                *params,
            ],
        )
        row = cursor.fetchone()
    return None if row is None else rows.instance(DBTaskResult, connection, row)


def recycle_connections() -> None:
    """What Django does around each request, before each task: drop a connection that
    broke or outlived CONN_MAX_AGE. Without the health check's extra round trip (a
    `SELECT 1` per task): the claim is the next statement, and a connection found
    broken there is a lost database, dropped and tried again."""
    close_old_connections()
    for connection in connections.all(initialized_only=True):
        if connection.connection is not None:
            connection.health_check_done = True


def beat(worker_id: str, threads: int) -> None:
    """Say that this worker is alive."""
    now = timezone.now()
    if not WorkerHeartbeat.objects.filter(worker_id=worker_id).update(last_seen=now):
        WorkerHeartbeat.objects.create(
            worker_id=worker_id,
            host=socket.gethostname()[:255],
            pid=os.getpid(),
            threads=threads,
            last_seen=now,
        )


def requeue(task: DBTaskResult, why: str) -> int:
    """Put a task whose run ended without a record back in the queue, or mark it FAILED
    once it has been taken TASK_MAX_ATTEMPTS times. Conditional on the task still being
    in that run, so concurrent callers change it once; 1 if this call changed it."""
    same_run = DBTaskResult.objects.filter(
        pk=task.pk, status=TaskResultStatus.RUNNING, started_at=task.started_at
    )
    runs = len(task.worker_ids)
    if runs >= settings.TASK_MAX_ATTEMPTS:
        changed = same_run.update(
            status=TaskResultStatus.FAILED,
            finished_at=timezone.now(),
            exception_class_path=f"{__name__}.{TaskAbandoned.__qualname__}",
            traceback=f"{__name__}.TaskAbandoned: {ABANDONED.format(runs=runs)}\n",
        )
        if changed:
            logger.error("Task %s (%s) %s %s times: failed", task.pk, task.task_path, why, runs)
        return changed
    changed = same_run.update(status=TaskResultStatus.READY, started_at=None)
    if changed:
        logger.warning("Task %s (%s) %s: it runs again", task.pk, task.task_path, why)
    return changed


def recover_abandoned_tasks(
    timeout: timedelta | None = None, *, worker_id: str = "", running: frozenset = frozenset()
) -> int:
    """Make abandoned tasks READY again (or FAILED after too many runs); how many.

    A task is abandoned when it has been RUNNING for longer than the timeout and the
    worker that took it has not been heard from for as long (it died), or when that
    worker is the caller, `worker_id`, and none of its threads runs it (`running`): its
    claim committed but the answer was lost, or its end could not be recorded, with
    the database gone for a moment.
    """
    timeout = timeout or timedelta(seconds=settings.TASK_WORKER_TIMEOUT)
    cutoff = timezone.now() - timeout
    alive = set(
        WorkerHeartbeat.objects.filter(last_seen__gte=cutoff).values_list("worker_id", flat=True)
    )
    recovered = 0
    stale = DBTaskResult.objects.running().filter(started_at__lt=cutoff)
    for task in stale.only("id", "task_path", "worker_ids", "started_at"):
        taken_by = task.worker_ids[-1] if task.worker_ids else ""
        if taken_by and taken_by == worker_id:
            if str(task.pk) not in running:
                recovered += requeue(task, "lost its database connection")
        elif taken_by not in alive:
            recovered += requeue(task, "was abandoned by a dead worker")
    return recovered


class Listener:
    """A connection of its own that LISTENs for enqueues (PostgreSQL only)."""

    def __init__(self, alias: str) -> None:
        self.alias = alias
        self.connection = None

    def wait(self, timeout: float) -> bool:
        """Whether a task was enqueued within `timeout` seconds."""
        notified = False
        try:
            if self.connection is None:
                wrapper = connections[self.alias]
                self.connection = wrapper.get_new_connection(wrapper.get_connection_params())
                self.connection.autocommit = True
                self.connection.execute(f"LISTEN {CHANNEL}")
            for _ in self.connection.notifies(timeout=timeout, stop_after=1):
                notified = True
            # Enqueues that came together wake the workers once.
            for _ in self.connection.notifies(timeout=0):
                pass
        except Exception:  # any failure: poll until it reconnects
            logger.warning("Lost the task notifications; polling meanwhile", exc_info=True)
            self.close()
            time.sleep(timeout)
        return notified

    def close(self) -> None:
        if self.connection is not None:
            with contextlib.suppress(Exception):  # it is broken already
                self.connection.close()
            self.connection = None


class Worker:
    """One worker process: `threads` runner threads and the supervisor (`serve()`).

    `run_one()` alone runs one task in the calling thread: tests and commands use it (through
    `run_ready_tasks`) to run tasks in-process.
    """

    def __init__(
        self,
        *,
        worker_id: str,
        threads: int = 1,
        interval: float = 1.0,
        backend_name: str = "default",
        queue_names=("default",),
        excluded_queue_names=(),
        batch: bool = False,
        max_tasks: int | None = None,
    ) -> None:
        self.worker_id = worker_id
        self.threads = threads
        self.interval = interval
        self.backend_name = backend_name
        self.queue_names = tuple(queue_names)
        self.excluded_queue_names = tuple(excluded_queue_names)
        self.batch = batch
        self.max_tasks = max_tasks
        self.stopping = threading.Event()
        self.wake = threading.Condition()
        self.ready_seen = 0  # ready tasks the supervisor counted and no thread took up yet
        self.waiting = 0  # runner threads asleep in wait_for_work
        self.looks = 0  # the supervisor's looks (a notification, a poll) so far
        self.lock = threading.Lock()
        self.started = 0
        self.running: set[str] = set()  # the ids of the tasks this process's threads run
        self.scheduler = Scheduler()
        self.heartbeat_every = max(0.2, settings.TASK_WORKER_TIMEOUT / 4)

    @property
    def alias(self) -> str:
        return router.db_for_write(DBTaskResult)

    def tasks(self):
        return ready_tasks(self.backend_name, self.queue_names, self.excluded_queue_names)

    def claim(self, task_id: str | None = None) -> DBTaskResult | None:
        """The next ready task (only `task_id`, when given), claimed for this worker."""
        if connections[self.alias].vendor == "postgresql":
            return claim_ready(
                self.worker_id,
                backend_name=self.backend_name,
                queue_names=self.queue_names,
                excluded=self.excluded_queue_names,
                task_id=task_id,
                using=self.alias,
            )
        tasks = self.tasks() if task_id is None else self.tasks().filter(pk=task_id)
        return claim_next(tasks, self.worker_id)

    def runner(self) -> TaskRunner:
        """django_tasks_db's runner, for its run_task: run, record the outcome, signal."""
        return TaskRunner(
            queue_names=list(self.queue_names),
            interval=self.interval,
            batch=True,
            backend_name=self.backend_name,
            startup_delay=False,
            max_tasks=None,
            worker_id=self.worker_id,
            excluded_queue_names=list(self.excluded_queue_names),
        )

    def run_one(self, runner: TaskRunner | None = None) -> bool:
        """Claim and run the next ready task; False when none is ready (or --max-tasks
        have been started)."""
        with self.lock:
            if self.max_tasks is not None and self.started >= self.max_tasks:
                return False
        task_result = self.claim()
        if task_result is None:
            return False
        with self.lock:
            self.started += 1
            if self.max_tasks is not None and self.started >= self.max_tasks:
                self.stop()
            self.running.add(str(task_result.pk))
        try:
            (runner or self.runner()).run_task(task_result)
        finally:
            with self.lock:
                self.running.discard(str(task_result.pk))
        return True

    def run_thread(self) -> None:
        runner = self.runner()
        failures = 0
        try:
            while not self.stopping.is_set():
                try:
                    recycle_connections()
                    looked = self.looks
                    if self.run_one(runner):
                        failures = 0
                        continue
                    failures = 0
                except LOST_DATABASE:
                    failures += 1
                    logger.exception("The task database is unreachable; trying again")
                    self.drop_connection()
                    self.stopping.wait(min(30.0, 0.5 * 2**failures))
                    continue
                if self.batch:
                    return
                if not self.wait_for_work(looked):
                    # Idle: give the connection back, so an idle worker holds two (its
                    # round's and the listener's) rather than one per thread.
                    connections.close_all()
        finally:
            connections.close_all()

    def wait_for_work(self, looked: int) -> bool:
        """Sleep until the supervisor sees a ready task; False if IDLE_WAIT seconds passed
        without one. `looked`: the supervisor's looks when this thread's own look for a
        task began; if it looked again since, tasks may have come that the thread missed,
        and it does not sleep."""
        with self.wake:
            if self.looks != looked:
                return True
            self.waiting += 1
            try:
                if not self.ready_seen and not self.stopping.is_set():
                    self.wake.wait_for(lambda: self.ready_seen or self.stopping.is_set(), IDLE_WAIT)
            finally:
                self.waiting -= 1
            if self.ready_seen:
                self.ready_seen -= 1
                return True
            return False

    def wake_runners(self) -> None:
        """Wake as many waiting threads as there are ready tasks (one query). Counted, so
        that a thread about to wait when the count comes does not miss it. With no thread
        waiting there is nothing to count: each busy thread looks for its next task when
        its task ends (a notification per enqueue would otherwise cost a query each)."""
        with self.wake:
            self.looks += 1
            if not self.waiting:
                return
        ready = self.tasks()[: self.threads].count()
        with self.wake:
            self.ready_seen = ready
            if ready:
                self.wake.notify(ready)

    def drain(self, queue: Queue) -> None:
        """A registered queue's thread."""
        try:
            queue.serve(self.worker_id, self.stopping)
        except Exception:  # a bug: the tasks go on; the queue waits for a restart
            logger.exception("The queue %s stopped", queue.name)
        finally:
            connections.close_all()

    def drop_connection(self) -> None:
        with contextlib.suppress(DatabaseError):
            connections[self.alias].close()

    def look_after(self) -> None:
        """The supervisor's round: heartbeat, abandoned tasks, the schedule."""
        try:
            beat(self.worker_id, self.threads)
            with self.lock:
                running = frozenset(self.running)
            recover_abandoned_tasks(worker_id=self.worker_id, running=running)
            self.scheduler.enqueue_due()
        except LOST_DATABASE:
            logger.exception("The task database is unreachable; trying again")
            self.drop_connection()

    def serve(self) -> None:
        """Run the runner threads until stop() (or, with --batch, until none is ready)."""
        # A thread woken on time (a campaign message at its turn) waits for the
        # interpreter lock at most this long, not the default 5 ms, before it runs.
        sys.setswitchinterval(SWITCH_INTERVAL)
        logger.info(
            "Worker %s: %s thread(s), queues %s", self.worker_id, self.threads, self.queue_names
        )
        threads = [
            threading.Thread(target=self.run_thread, name=f"task-{n}", daemon=True)
            for n in range(self.threads)
        ]
        drains = [
            threading.Thread(target=self.drain, args=(queue,), name=queue.name)
            for queue in ([] if self.batch else QUEUES)
        ]
        listener = Listener(self.alias) if connections[self.alias].vendor == "postgresql" else None
        next_round = next_poll = 0.0
        for thread in threads + drains:
            thread.start()
        try:
            while not self.stopping.is_set() and any(t.is_alive() for t in threads):
                if time.monotonic() >= next_round:
                    self.look_after()
                    next_round = time.monotonic() + self.heartbeat_every
                # In slices of a second at most, so that a stop is seen.
                wait = max(0.0, min(next_round, next_poll, time.monotonic() + 1) - time.monotonic())
                if listener is not None:
                    notified = listener.wait(wait)
                else:  # SQLite: no notifications, only the poll
                    self.stopping.wait(wait)
                    notified = False
                if self.stopping.is_set():
                    break
                if notified or time.monotonic() >= next_poll:
                    try:
                        self.wake_runners()
                    except LOST_DATABASE:
                        self.drop_connection()
                    next_poll = time.monotonic() + self.interval
            if self.batch:  # --batch: the queues' due work too, then exit
                run_queues(self.worker_id)
        finally:
            self.stop()
            for thread in threads + drains:
                thread.join()
            if listener is not None:
                listener.close()
            with contextlib.suppress(DatabaseError):
                WorkerHeartbeat.objects.filter(worker_id=self.worker_id).delete()
            connections.close_all()
            logger.info("Worker %s stopped", self.worker_id)

    def stop(self) -> None:
        """Take no new task; the running ones finish."""
        self.stopping.set()
        with self.wake:
            self.wake.notify_all()


def run_queues(worker_id: str) -> int:
    """Do the registered queues' due work in this thread until none is due; how much."""
    done = 0
    while progress := sum(queue.run_due(worker_id) for queue in QUEUES):
        done += progress
    return done


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


@dataclass(frozen=True)
class QueueStatus:
    ready: int  # due and waiting for a worker: the queue's depth
    oldest_wait: timedelta | None  # how long the longest-waiting of them has been due
    deferred: int  # waiting for their run_after (retries)
    running: int
    failed_last_day: int
    workers: list[WorkerHeartbeat]  # alive: heard from within TASK_WORKER_TIMEOUT


def ready_queue() -> tuple[int, timedelta | None]:
    """The queue's depth (tasks due and waiting for a worker) and how long the
    longest-waiting of them has been due (None when none waits): for tasks_status, the
    readiness check and the metrics."""
    now = timezone.now()
    never = get_date_max()
    ready = DBTaskResult.objects.ready()
    waited = []
    first = ready.filter(run_after=never).order_by("enqueued_at").only("enqueued_at").first()
    if first is not None:
        waited.append(now - first.enqueued_at)
    due = ready.exclude(run_after=never).order_by("run_after").only("run_after").first()
    if due is not None:
        waited.append(now - due.run_after)
    return ready.count(), max(waited) if waited else None


def queue_status() -> QueueStatus:
    """The queue as `manage.py tasks_status` shows it, in a few queries."""
    now = timezone.now()
    never = get_date_max()
    depth, oldest_wait = ready_queue()
    timeout = timedelta(seconds=settings.TASK_WORKER_TIMEOUT)
    return QueueStatus(
        ready=depth,
        oldest_wait=oldest_wait,
        deferred=DBTaskResult.objects.filter(
            status=TaskResultStatus.READY, run_after__gt=now, run_after__lt=never
        ).count(),
        running=DBTaskResult.objects.running().count(),
        failed_last_day=DBTaskResult.objects.failed()
        .filter(finished_at__gte=now - timedelta(days=1))
        .count(),
        workers=list(
            WorkerHeartbeat.objects.filter(last_seen__gte=now - timeout).order_by("started_at")
        ),
    )
