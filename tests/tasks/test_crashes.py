"""Crashes, with real processes on PostgreSQL: a worker killed with SIGKILL in the middle
of an auto-reply, three workers sharing a thousand tasks, and a web process killed
between its commit and its answer. Nothing is lost, and nothing is sent twice."""

import json
import subprocess
import sys
import threading

import pytest
import requests
from django.db import connection, transaction
from django_tasks_db.models import DBTaskResult

from devtools.loopback import free_port
from devtools.loopback import reachable as listening
from messaging_project.worker.models import WorkerHeartbeat
from sending.models import AutoReply, Chat
from tests.background import run_tasks, tasks
from tests.inbound.conftest import deliver, envelope, sign, text_message
from tests.tasks import jobs
from tests.tasks.conftest import sends
from tests.tasks.processes import (
    ROOT,
    environment,
    start_worker,
    stop,
    wait_until,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="real processes against one PostgreSQL"
    ),
]
SEND = "inbound.auto_replies.send_auto_reply"
ACCEPTED = {"messaging_product": "whatsapp", "contacts": [], "messages": [{"id": "wamid.LATE"}]}


def test_a_worker_killed_during_the_send_leaves_the_reply_sent_once(
    cloud_webhook_org, hours, graph, tmp_path
):
    arrived = threading.Event()
    graph.on_request = lambda request: arrived.set()
    graph.reply(200, ACCEPTED, delay=20)  # the first worker is killed while it waits
    env = environment(
        tmp_path,
        WHATSAPP_GRAPH_URL=graph.url,
        WHATSAPP_TIMEOUT="30",
        TASK_WORKER_TIMEOUT="2",
    )
    deliver(cloud_webhook_org, envelope(text_message("hours?")))
    log = tmp_path / "workers.log"

    first = start_worker(env, log, "--worker-id", "first")
    try:
        assert arrived.wait(60), log.read_text()
    finally:
        first.kill()  # SIGKILL: no chance to record anything
        first.wait(10)
    task = tasks(SEND).get()
    assert (task.status, task.worker_ids) == ("RUNNING", ["first"])
    assert AutoReply.objects.get().state == "sending"

    second = start_worker(env, log, "--worker-id", "second")
    try:
        wait_until(lambda: tasks(SEND).get().status == "SUCCESSFUL", what="the second worker's run")
    finally:
        assert stop(second) == 0, log.read_text()

    task = tasks(SEND).get()
    assert task.worker_ids == ["first", "second"]
    assert len(sends(graph)) == 1  # sent once, never twice
    owed = AutoReply.objects.get()
    assert (owed.state, owed.attempts) == ("unknown", 1)
    assert not WorkerHeartbeat.objects.filter(worker_id="second").exists()


def test_three_workers_run_a_thousand_tasks_each_exactly_once(runs_table, tmp_path):
    env = environment(tmp_path, TASK_WORKER_TIMEOUT="10")
    log = tmp_path / "workers.log"
    workers = [start_worker(env, log, "--worker-id", f"w{n}", "--threads", "2") for n in range(3)]
    try:
        wait_until(lambda: WorkerHeartbeat.objects.count() == 3, what="three workers")
        with transaction.atomic():  # all at once: the workers race for every one
            for key in range(1000):
                jobs.record_run.enqueue(key)
        wait_until(
            lambda: (
                not tasks("tests.tasks.jobs.record_run")
                .filter(status__in=["READY", "RUNNING"])
                .exists()
            ),
            seconds=180,
            what="the thousand tasks",
        )
    finally:
        codes = [stop(worker) for worker in workers]

    assert codes == [0, 0, 0], log.read_text()[-3000:]
    runs = jobs.runs()
    assert len(runs) == 1000
    assert sorted(key for key, _, _ in runs) == list(range(1000))
    assert len({pid for _, pid, _ in runs}) == 3  # shared by the three processes
    statuses = tasks("tests.tasks.jobs.record_run").values_list("status", flat=True)
    assert set(statuses) == {"SUCCESSFUL"}
    assert all(len(t.worker_ids) == 1 for t in tasks("tests.tasks.jobs.record_run"))


def test_the_reply_survives_the_web_process_dying_between_its_commit_and_its_answer(
    cloud_webhook_org, hours, graph, tmp_path
):
    port = free_port()
    env = environment(tmp_path, WHATSAPP_GRAPH_URL=graph.url)
    web = subprocess.Popen(
        [sys.executable, "-m", "tests.tasks.crash_after_commit", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "web.log").open("w"),
    )
    try:
        wait_until(lambda: listening(port), what="the web process")
        body = json.dumps(envelope(text_message("hours?", wam_id="wamid.CRASH"))).encode()
        with pytest.raises(requests.ConnectionError):
            requests.post(
                f"http://127.0.0.1:{port}/webhooks/whatsapp/{cloud_webhook_org.uuid}",
                data=body,
                headers={"Content-Type": "application/json", "X-Hub-Signature-256": sign(body)},
                timeout=30,
            )
        assert web.wait(30) == -9  # killed, after the commit and before any answer
    finally:
        if web.poll() is None:
            web.kill()

    # WhatsApp got no answer; the message and the reply it is owed are stored.
    assert Chat.objects.get(type="inbound").wam_id == "wamid.CRASH"
    assert tasks(SEND).get().status == "READY"  # the reply as matched, in its task
    assert not AutoReply.objects.exists()  # written by the task's run
    assert sends(graph) == []

    assert run_tasks() == 1  # a worker picks it up
    assert [r.json["text"]["body"] for r in sends(graph)] == ["9 to 5"]
    assert AutoReply.objects.get().state == "sent"

    # WhatsApp delivers it again, since it never got a 200: nothing is owed twice.
    again = deliver(cloud_webhook_org, envelope(text_message("hours?", wam_id="wamid.CRASH")))
    assert again.json()["processed"]["duplicates"] == 1
    assert run_tasks() == 0
    assert len(sends(graph)) == 1
    assert DBTaskResult.objects.count() == 1
