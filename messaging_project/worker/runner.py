"""The task worker: `manage.py db_worker`, the `worker:` process of the Procfile.

(Over 400 lines: the loop, its claims by priority and its stop on SIGTERM are read together.)

django_tasks_db stores the tasks and records how each run ended; this worker adds what
running them in production takes:

- **Threads.** One process runs up to TASK_WORKER_THREADS tasks at once (a task mostly
  waits on WhatsApp), each thread with its own database connection.
- **Claiming** (claims.py). A thread takes the next ready task with `SELECT ... FOR
  UPDATE SKIP LOCKED` and marks it RUNNING in the same transaction (django_tasks_db's
  claim), so however many workers run, on however many machines, each task is taken once.
- **Priorities** (priorities.py). The claim takes the highest priority first, then the
  oldest: auto-replies and media fetches (INTERACTIVE) before the clean-ups, and those
  before campaign sends (BULK). A sender task holds its thread for a slice of up to 20 s,
  so a process runs bulk tasks in at most three quarters of its threads: the others
  claim only tasks that are not bulk, and an auto-reply never waits for a slice to end.
- **Waking.** On PostgreSQL a trigger NOTIFYs when tasks are inserted (migration
  base.0002), delivered when the inserting transaction commits, and an idle worker
  starts the task at once; otherwise, and for tasks deferred with `run_after`, it looks
  every `--interval` seconds. While every thread is busy a notification costs nothing
  (no count of the ready tasks): each thread looks for its next task as its task ends.
- **Heartbeats and recovery** (recovery.py). A task left RUNNING by a worker not heard
  from for TASK_WORKER_TIMEOUT seconds is made READY again and another worker runs it.
- **The schedule.** Each process enqueues the periodic clean-ups as their period begins
  (schedule.py): no cron.
- **A lost database** is logged and waited out; the worker does not exit, and a task
  whose claim or end it could not record runs again.
- **Other queues.** An app whose rows are a queue of their own (the event deliveries)
  registers it (queues.py, from its AppConfig.ready(): the worker imports no app).
  Each process drains each registered queue in one more thread (the queue's `serve`,
  which looks for work as it sees fit), and `run_ready_tasks` (inline.py) drains
  them inline too.
"""

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    close_old_connections,
    connections,
    router,
)
from django_tasks_db.management.commands.db_worker import Worker as TaskRunner
from django_tasks_db.models import DBTaskResult

from messaging_project.worker.claims import claim_next, ready_tasks
from messaging_project.worker.models import WorkerHeartbeat
from messaging_project.worker.priorities import bulk_threads, is_bulk
from messaging_project.worker.queries import claim_ready
from messaging_project.worker.queues import QUEUES, Queue, run_queues
from messaging_project.worker.recovery import beat, recover_abandoned_tasks
from messaging_project.worker.schedule import Scheduler

if TYPE_CHECKING:
    import psycopg

logger = logging.getLogger(__name__)

# The channel the trigger of migration base.0002 notifies when tasks are inserted.
CHANNEL = "messaging_tasks"

# The database went away or could not be reached: wait and try again.
LOST_DATABASE = (OperationalError, InterfaceError)
# How long an idle thread sleeps when nothing wakes it (the supervisor wakes it sooner);
# a thread idle that long closes its database connection.
IDLE_WAIT = 5.0
# Seconds a thread holds the interpreter lock before another that wants it may run.
SWITCH_INTERVAL = 0.001


def recycle_connections() -> None:
    """What Django does around each request, before each task: drop a connection that
    broke or outlived CONN_MAX_AGE. Without the health check's extra round trip (a
    `SELECT 1` per task): the claim is the next statement, and a connection found
    broken there is a lost database, dropped and tried again."""
    close_old_connections()
    for connection in connections.all(initialized_only=True):
        if connection.connection is not None:
            # Django's attribute since 5.1, not yet in django-stubs.
            connection.health_check_done = True  # type: ignore[attr-defined]


class Listener:
    """A connection of its own that LISTENs for enqueues (PostgreSQL only).

    It connects to DATABASE_DIRECT_URL when that is set: a pooler in transaction mode
    (DATABASE_POOLING=transaction) hands each transaction any server connection, so a
    LISTEN through it would be lost, or worse, left on a pooled connection another client
    then gets. Behind such a pooler without a direct URL there is no listener
    (`for_database` gives None) and the worker polls. While the listening database cannot
    be reached, the worker polls too, and tries it again every RETRY seconds.
    """

    # Seconds between attempts to reach a listening database that could not be reached;
    # each attempt gives up after CONNECT_TIMEOUT, which the supervisor waits out.
    RETRY = 30.0
    CONNECT_TIMEOUT = 3

    def __init__(self, alias: str, direct: Mapping[str, Any] | None = None) -> None:
        self.alias = alias
        self.direct = direct
        self.connection: psycopg.Connection | None = None
        self.retry_at = 0.0
        self.lost = False

    @classmethod
    def for_database(cls, alias: str) -> "Listener | None":
        """The listener the settings call for, or None: only polling."""
        if connections[alias].vendor != "postgresql":
            return None
        direct = settings.DATABASE_DIRECT
        if direct is None and settings.DATABASE_POOLING == "transaction":
            logger.info("No DATABASE_DIRECT_URL behind the pooler: polling for tasks")
            return None
        return cls(alias, direct)

    def connection_params(self) -> dict:
        """The default alias's parameters, or the direct URL's in their place."""
        params = connections[self.alias].get_connection_params()
        if self.direct is not None:
            fields = {"dbname": "NAME", "user": "USER", "password": "PASSWORD"}
            fields |= {"host": "HOST", "port": "PORT"}
            for param, field in fields.items():
                params.pop(param, None)
                if self.direct.get(field):
                    params[param] = self.direct[field]
            params.update(self.direct.get("OPTIONS") or {})
        params.setdefault("connect_timeout", self.CONNECT_TIMEOUT)
        return params

    def connect(self) -> None:
        wrapper = connections[self.alias]
        params = self.connection_params()
        try:
            self.connection = wrapper.get_new_connection(params)
            self.connection.autocommit = True
            self.connection.execute(f"LISTEN {CHANNEL}")
        except Exception as error:  # unreachable, refused, misconfigured: poll meanwhile
            self.close()
            self.retry_at = time.monotonic() + self.RETRY
            if not self.lost:
                self.lost = True
                logger.warning(
                    "Cannot LISTEN for tasks on %s:%s (%s); polling meanwhile, trying again "
                    "every %g s",
                    params.get("host", "-"),
                    params.get("port", "-"),
                    str(error).strip(),
                    self.RETRY,
                )
            return
        if self.lost:
            self.lost = False
            logger.info("Listening for tasks again")

    def wait(self, timeout: float) -> bool:
        """Whether a task was enqueued within `timeout` seconds."""
        if self.connection is None and time.monotonic() >= self.retry_at:
            self.connect()
        if self.connection is None:
            time.sleep(timeout)
            return False
        notified = False
        try:
            for _ in self.connection.notifies(timeout=timeout, stop_after=1):
                notified = True
            # Enqueues that came together wake the workers once.
            for _ in self.connection.notifies(timeout=0):
                pass
        except Exception:  # any failure: poll until it reconnects
            logger.warning("Lost the task notifications; polling meanwhile", exc_info=True)
            self.lost = True
            self.close()
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
        # Threads that run (or are claiming, and may get) a bulk task, and how many may.
        self.bulk_running = 0
        self.bulk_limit = bulk_threads(threads)
        self.scheduler = Scheduler()
        self.heartbeat_every = max(0.2, settings.TASK_WORKER_TIMEOUT / 4)

    @property
    def alias(self) -> str:
        return router.db_for_write(DBTaskResult)

    def tasks(self):
        return ready_tasks(self.backend_name, self.queue_names, self.excluded_queue_names)

    def claim(self, task_id: str | None = None, *, bulk: bool = True) -> DBTaskResult | None:
        """The next ready task (only `task_id`, when given), claimed for this worker;
        not a bulk one unless `bulk`."""
        if connections[self.alias].vendor == "postgresql":
            return claim_ready(
                self.worker_id,
                backend_name=self.backend_name,
                queue_names=self.queue_names,
                excluded=self.excluded_queue_names,
                task_id=task_id,
                bulk=bulk,
                using=self.alias,
            )
        tasks = self.tasks() if task_id is None else self.tasks().filter(pk=task_id)
        if not bulk:
            tasks = tasks.filter(priority__gte=0)
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
            # A bulk place is taken before the claim, so that threads claiming at once
            # never run more bulk tasks than bulk_limit; given back if not used.
            bulk = self.bulk_running < self.bulk_limit
            if bulk:
                self.bulk_running += 1
        holds_bulk = bulk
        try:
            task_result = self.claim(bulk=bulk)
            if task_result is None:
                return False
            holds_bulk = bulk and is_bulk(task_result.priority)
            with self.lock:
                if bulk and not holds_bulk:
                    self.bulk_running -= 1
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
        finally:
            if holds_bulk:
                with self.lock:
                    self.bulk_running -= 1

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
        listener = Listener.for_database(self.alias)
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
