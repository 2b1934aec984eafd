"""A web process that dies between a webhook's commit and its answer.

    python -m tests.tasks.crash_after_commit PORT

It serves the whole site (Django's WSGI application, on the standard library's server)
with one change: when the transaction of a WhatsApp webhook commits, the process kills
itself with SIGKILL, before the response is written. That is the moment the thread
pool lost auto-replies: the data committed, the work only in memory. The test then
checks that the work is in the database all the same.
"""

import os
import signal
import sys
from wsgiref.simple_server import WSGIRequestHandler, make_server

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "messaging_project.settings")
django.setup()

from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.db import transaction  # noqa: E402

from inbound.api import webhook  # noqa: E402

process_webhook = webhook.process_webhook


def process_then_die_at_the_commit(**kwargs):
    summary = process_webhook(**kwargs)
    transaction.on_commit(lambda: os.kill(os.getpid(), signal.SIGKILL))
    return summary


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        pass


if __name__ == "__main__":
    webhook.process_webhook = process_then_die_at_the_commit
    server = make_server(
        "127.0.0.1", int(sys.argv[1]), get_wsgi_application(), handler_class=QuietHandler
    )
    server.serve_forever()
