"""`manage.py db_worker`: run the background tasks (the Procfile's `worker:` process).

django_tasks_db's command of the same name, with its options, run by our worker
(messaging_project/worker/runner.py): threads, heartbeats, recovery of the tasks of dead
workers, the clean-up schedule. Start one per machine, or several: they share the
queue through the database.

SIGTERM or Ctrl-C: no new task is taken, the running ones finish, then it exits; the
outgoing HTTP calls still under way TASK_WORKER_GRACEFUL_TIMEOUT seconds later are cut
(failed attempts, retried as such), so it exits within that time whatever its peers do.
A second signal exits at once (the tasks it was running run again elsewhere).
"""

import gc
import os
import signal
import socket
from argparse import ArgumentParser

from django.conf import settings
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django.utils.crypto import get_random_string
from django_tasks_db.management.commands import db_worker

from messaging_project.core.deadlines import stop_all
from messaging_project.core.encryption import verify_stored_secrets
from messaging_project.worker.runner import Worker, logger


def worker_id() -> str:
    """Unique, and readable in the admin and in `tasks_status`: host, pid, random."""
    return f"{socket.gethostname()[:40]}-{os.getpid()}-{get_random_string(8)}"


class Command(db_worker.Command):
    help = "Run the background tasks: threads, heartbeats, recovery and the clean-up schedule."

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--threads",
            type=int,
            default=settings.TASK_WORKER_THREADS,
            help="Tasks run at once by this process (default: TASK_WORKER_THREADS, %(default)s).",
        )
        parser.set_defaults(worker_id=worker_id())

    def configure_logging(self, verbosity: int) -> None:
        """LOG_LEVEL decides, as for the web process (django_tasks_db's command would
        log two lines per task whatever it says); -v 0 and -v 2 still quieten and widen."""
        if verbosity != 1:
            super().configure_logging(verbosity)

    # Django passes every option, --threads too, which django_tasks_db's handle() lacks.
    def handle(self, *, verbosity, threads, reload, batch, **options) -> None:  # type: ignore[override]
        self.configure_logging(verbosity)
        if threads < 1:
            raise db_worker.CommandError("--threads must be at least 1.")
        queue_names = options["queue_name"].split(",")
        excluded = options["exclude_queues"].split(",") if options["exclude_queues"] else []
        if excluded and "*" not in queue_names:
            raise db_worker.CommandError("--exclude-queues can only be used with --queue-name=*")
        # Keys that cannot decrypt the stored secrets: stop now, saying so, rather than
        # fail every task that needs a secret.
        verify_stored_secrets()
        worker = Worker(
            worker_id=options["worker_id"],
            threads=threads,
            interval=options["interval"],
            backend_name=options["backend_name"],
            queue_names=queue_names,
            excluded_queue_names=excluded,
            batch=batch,
            max_tasks=options["max_tasks"],
        )
        # What is loaded by now lives as long as the process: kept out of the collector's
        # sight, a full collection takes a few milliseconds instead of stopping every
        # thread for 40-60 (a campaign's sends held past their turns).
        gc.collect()
        gc.freeze()
        if reload and not batch:
            if os.environ.get(DJANGO_AUTORELOAD_ENV) == "true":
                self.stop_on_signals(worker)
            run_with_reloader(worker.serve)
        else:
            self.stop_on_signals(worker)
            worker.serve()

    def stop_on_signals(self, worker: Worker) -> None:
        def stop(signum, frame):
            name = signal.strsignal(signum)
            if worker.stopping.is_set():
                logger.warning("%s again: stopping now", name)
                os._exit(1)
            logger.warning("%s: finishing the running tasks (again to stop now)", name)
            worker.stop()
            stop_all(settings.TASK_WORKER_GRACEFUL_TIMEOUT)

        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT):
            signal.signal(number, stop)
