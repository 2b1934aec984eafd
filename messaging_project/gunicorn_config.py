"""gunicorn's configuration: the web process of the Procfile and of
deploy/systemd/messaging-web.service, `gunicorn -c python:messaging_project.gunicorn_config`.

Its numbers and its logging come from the service's settings, read once as in every
process: WORKERS processes of THREADS threads (the figures the connection budget of
`check --deploy` counts), and gunicorn's own lines through the service's formatters, so
that with LOG_FORMAT=json every line the web process prints is JSON. It binds
127.0.0.1:$PORT (8000), or BIND (comma-separated addresses).

The `gthread` worker: threads overlap the waits on WhatsApp's API. `reuse_port` gives
each worker its own listening socket (SO_REUSEPORT) and the kernel spreads connections
over them; with one shared socket a burst of keep-alive connections could all land on
one worker at half the throughput (docs/performance.md). No control socket: gunicorn
would otherwise open one under the home directory.
"""

import gc
import logging
import os

from django.urls import get_resolver
from gunicorn import glogging
from prometheus_client import multiprocess

from messaging_project import settings as service

wsgi_app = "messaging_project.wsgi"
bind = [
    address.strip()
    for address in (os.environ.get("BIND") or f"127.0.0.1:{os.environ.get('PORT') or 8000}").split(
        ","
    )
    if address.strip()
]
workers = service.WEB_WORKERS
threads = service.WEB_THREADS
worker_class = "gthread"
reuse_port = True
graceful_timeout = 10
control_socket_disable = True
# The service logs one line per request (messaging.requests); gunicorn's access log would
# repeat it, with the query string, where the webhook's verify token travels.
accesslog = None
loglevel = service.LOGGING["root"]["level"].lower()


class ListeningAddresses(logging.Filter):
    """With reuse_port the master opens no socket (each worker opens its own), and
    gunicorn logs "Listening at:  (pid)": name the addresses bound instead."""

    addresses: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args  # a tuple here; a mapping only for a "%(name)s" message
        if (
            record.msg == "Listening at: %s (%s)"
            and isinstance(args, tuple)
            and args
            and not args[0]
        ):
            record.args = (",".join(f"http://{a}" for a in self.addresses), *args[1:])
        return True


class Logger(glogging.Logger):
    """gunicorn's logger, less its access log. gunicorn builds each request's access-log
    fields (a dozen, the date formatted) whenever a logging configuration is given, as
    below, even with no access log to write them to: a fifth of its own CPU a request."""

    def access(self, resp, req, environ, request_time) -> None:
        return


logger_class = Logger

# gunicorn's own loggers through the service's handler (its formatter, LOG_FORMAT, and its
# filters: secrets masked); Django configures the same handler again in each worker.
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {**service.LOGGING["filters"], "listening": {"()": ListeningAddresses}},
    "formatters": service.LOGGING["formatters"],
    "handlers": {
        "console": service.LOGGING["handlers"]["console"],
        "gunicorn": {
            **service.LOGGING["handlers"]["console"],
            "filters": [*service.LOGGING["handlers"]["console"]["filters"], "listening"],
        },
    },
    "root": service.LOGGING["root"],
    "loggers": {
        "gunicorn.error": {"handlers": ["gunicorn"], "propagate": False},
        "gunicorn.access": {"handlers": [], "propagate": False},
    },
}


def on_starting(server) -> None:
    ListeningAddresses.addresses = list(server.cfg.bind)
    # Warnings in this process too go through the logging (Django does it in the workers).
    logging.captureWarnings(True)


def post_worker_init(worker) -> None:
    """A worker has loaded the service: with its URLconf's views (imported by the first
    request otherwise), what is loaded by now lives as long as the process. Kept out of
    the collector's sight (gc.freeze(), as the task worker does), a full collection reads
    the objects made since instead of the whole heap, and stops every thread of the
    worker for a few tens of milliseconds instead of more than a hundred."""
    get_resolver().url_patterns  # noqa: B018  (the views, imported)
    gc.collect()
    gc.freeze()


def child_exit(server, worker) -> None:
    """A gunicorn worker exited: prometheus_client drops its live gauges (its counters
    stay in PROMETHEUS_MULTIPROC_DIR, so the machine's totals never go back)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.mark_process_dead(worker.pid)
