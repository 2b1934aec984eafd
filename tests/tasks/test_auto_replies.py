"""Auto-replies are tasks: enqueued with the inbound message, sent at most once however
many times their task runs, retried with backoff when the channel fails for now. The
task carries the reply as matched; its first run writes the AutoReply as its claim."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from devtools.cloud_api_server import graph_error
from inbound.auto_replies import send_auto_reply
from inbound.services.webhook import process_webhook
from sending.models import AutoReply, Chat
from tests.background import make_due, run_tasks, tasks
from tests.channel import set_channel
from tests.contacts.test_contact_counter import run_concurrently
from tests.databases import on_postgresql
from tests.inbound.conftest import deliver, envelope, text_message
from tests.tasks.conftest import sends

SEND = "inbound.auto_replies.send_auto_reply"


def only_auto_reply() -> AutoReply:
    return AutoReply.objects.get()


def run_owed_task() -> str:
    """The queued reply's task run here, as a worker would run it (again)."""
    return send_auto_reply.call(**tasks(SEND).get().args_kwargs["kwargs"])


def test_the_reply_is_owed_in_the_webhooks_transaction_and_sent_by_a_worker(
    cloud_webhook_org, hours, graph
):
    response = deliver(cloud_webhook_org, envelope(text_message("hours?")))

    assert response.status_code == 200
    assert sends(graph) == []  # nothing leaves during the request
    # The reply as matched travels with its task; its run writes the AutoReply.
    [task] = tasks(SEND)
    inbound = Chat.objects.get(type="inbound")
    assert task.status == "READY"
    assert task.args_kwargs["kwargs"]["owed"] == {
        "inbound": inbound.pk,
        "canned_reply": hours.pk,
        "message": "9 to 5",
        "media_type": "",
    }
    assert not AutoReply.objects.exists()

    assert run_tasks() == 1

    assert [r.json["text"]["body"] for r in sends(graph)] == ["9 to 5"]
    owed = only_auto_reply()
    assert (owed.inbound, owed.message, owed.canned_reply) == (inbound, "9 to 5", hours)
    assert owed.created_at == inbound.created_at  # owed since the message came
    assert (owed.state, owed.attempts) == ("sent", 1)
    assert owed.reply == Chat.objects.get(type="outbound", status="accepted")
    assert [t.status for t in tasks(SEND)] == ["SUCCESSFUL"]


def test_a_webhook_rolled_back_leaves_neither_the_message_nor_its_task(cloud_webhook_org, hours):
    with pytest.raises(RuntimeError), transaction.atomic():
        process_webhook(organization=cloud_webhook_org, payload=envelope(text_message("hours?")))
        raise RuntimeError("the request failed after the webhook was processed")

    assert not Chat.objects.exists()
    assert not AutoReply.objects.exists()
    assert not tasks().exists()


def test_a_message_that_matches_nothing_owes_nothing(cloud_webhook_org, hours):
    deliver(cloud_webhook_org, envelope(text_message("good morning")))
    assert Chat.objects.filter(type="inbound").count() == 1
    assert not AutoReply.objects.exists()
    assert not tasks().exists()


def test_the_task_run_twice_sends_the_reply_once(cloud_webhook_org, hours, graph):
    deliver(cloud_webhook_org, envelope(text_message("hours?")))

    assert run_owed_task() == "sent"
    assert run_owed_task() == "sent"
    # and a retry's run, which names the AutoReply
    assert send_auto_reply.call(only_auto_reply().pk) == "sent"

    assert len(sends(graph)) == 1
    assert Chat.objects.filter(type="outbound").count() == 1
    assert (only_auto_reply().state, only_auto_reply().attempts) == ("sent", 1)


def test_a_reply_whose_canned_reply_changed_meanwhile_is_sent_as_matched(
    cloud_webhook_org, hours, graph
):
    deliver(cloud_webhook_org, envelope(text_message("hours?")))
    hours.delete()  # before any worker ran the task

    assert run_tasks() == 1

    assert [r.json["text"]["body"] for r in sends(graph)] == ["9 to 5"]
    owed = only_auto_reply()
    assert (owed.state, owed.message, owed.canned_reply) == ("sent", "9 to 5", None)


def test_a_reply_to_a_message_deleted_meanwhile_is_not_sent(cloud_webhook_org, hours, graph):
    deliver(cloud_webhook_org, envelope(text_message("hours?")))
    Chat.objects.filter(type="inbound").delete()

    assert run_owed_task() == "gone"
    assert sends(graph) == []
    assert not AutoReply.objects.exists()


def stored_reply(organization, canned_reply, **values) -> AutoReply:
    """The AutoReply row of the inbound message's reply, as a webhook or an earlier run
    wrote it."""
    return AutoReply.objects.create(
        organization=organization,
        inbound=Chat.objects.get(type="inbound"),
        canned_reply=canned_reply,
        message="9 to 5",
        **values,
    )


def test_a_reply_owed_before_the_claim_moved_to_the_worker_is_still_sent_once(
    cloud_webhook_org, hours, graph
):
    # What the webhook wrote before: a pending AutoReply and a task that names it.
    deliver(cloud_webhook_org, envelope(text_message("good morning")))
    owed = stored_reply(cloud_webhook_org, hours)
    send_auto_reply.enqueue(owed.pk)

    assert run_tasks() == 1
    assert send_auto_reply.call(owed.pk) == "sent"

    assert [r.json["text"]["body"] for r in sends(graph)] == ["9 to 5"]
    owed.refresh_from_db()
    assert (owed.state, owed.attempts) == ("sent", 1)


def test_a_run_that_finds_an_unfinished_claim_marks_it_unknown_and_sends_nothing(
    cloud_webhook_org, hours, graph
):
    deliver(cloud_webhook_org, envelope(text_message("hours?")))
    # An earlier run claimed it (wrote it) and its worker died during the channel call.
    owed = stored_reply(cloud_webhook_org, hours, state="sending", attempts=1)

    assert run_tasks() == 1

    assert sends(graph) == []
    owed.refresh_from_db()
    assert (owed.state, owed.attempts) == ("unknown", 1)
    # Its chat, failed with no message id, for a status webhook to settle it.
    [chat] = Chat.objects.filter(type="outbound")
    assert (chat.status, chat.wam_id, owed.reply) == ("failed", None, chat)


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_runs_of_one_auto_reply_send_it_once(cloud_webhook_org, hours, graph):
    deliver(cloud_webhook_org, envelope(text_message("hours?")))
    slow = {"messaging_product": "whatsapp", "contacts": [], "messages": [{"id": "wamid.SLOW"}]}
    graph.reply(200, slow, delay=0.5)  # the send is slow; the other runs race it

    outcomes = run_concurrently([run_owed_task] * 3)  # each would write the claim

    assert len(sends(graph)) == 1
    assert "sent" in outcomes and set(outcomes) <= {"sent", "unknown"}
    owed = only_auto_reply()
    assert (owed.state, owed.attempts) == (
        "sent",
        1,
    )  # the run that sent it records it, unknown or not
    # A run that took it for dead recorded its chat unknown: the answer settled that chat.
    [chat] = Chat.objects.filter(type="outbound")
    assert (owed.reply, chat.wam_id, chat.status) == (chat, "wamid.SLOW", "accepted")


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(
            {"status": 503, "json": graph_error(2, "Service temporarily unavailable")}, id="5xx"
        ),
        pytest.param(
            {"status": 400, "json": graph_error(130429, "Rate limit hit")}, id="throttled"
        ),
        pytest.param({"status": 429, "json": None, "body": b"slow down"}, id="429"),
    ],
)
def test_a_failure_worth_retrying_is_retried_later_and_then_sent(
    cloud_webhook_org, hours, graph, settings, failure
):
    settings.TASK_RETRY_DELAY = 10
    graph.reply(**failure)
    deliver(cloud_webhook_org, envelope(text_message("hours?")))
    before = timezone.now()

    run_tasks()

    owed = only_auto_reply()
    assert (owed.state, owed.attempts) == ("retrying", 1)
    assert owed.last_error
    retry = tasks(SEND).get(status="READY")
    # The first retry waits between half and all of TASK_RETRY_DELAY.
    assert before + timedelta(seconds=5) <= retry.run_after
    assert retry.run_after <= timezone.now() + timedelta(seconds=10)
    assert run_tasks() == 0  # not before its time

    make_due()
    assert run_tasks() == 1

    owed.refresh_from_db()
    assert (owed.state, owed.attempts, owed.last_error) == ("sent", 2, "")
    assert len(sends(graph)) == 2
    assert owed.reply.status == "accepted"


def test_a_send_that_got_no_answer_is_unknown_and_not_sent_again(cloud_webhook_org, hours, graph):
    """A read timeout: WhatsApp may have sent it, and it has no idempotency key."""
    graph.reply(status=200, json=None, delay=2.5)
    deliver(cloud_webhook_org, envelope(text_message("hours?")))

    run_tasks()
    make_due()
    run_tasks()

    owed = only_auto_reply()
    assert (owed.state, owed.attempts) == ("unknown", 1)
    assert "timeout" in owed.last_error
    assert len(sends(graph)) == 1
    assert not tasks(SEND).filter(status="READY").exists()


def test_the_retries_back_off_exponentially_and_stop_after_the_last_attempt(
    cloud_webhook_org, hours, graph, settings
):
    settings.TASK_RETRY_DELAY = 10
    settings.TASK_MAX_ATTEMPTS = 4
    for _ in range(5):
        graph.reply(503, graph_error(2, "Service temporarily unavailable"))
    deliver(cloud_webhook_org, envelope(text_message("hours?")))

    delays = []
    run_tasks()
    for _ in range(4):
        retry = tasks(SEND).filter(status="READY").first()
        if retry is None:
            break
        delays.append((retry.run_after - retry.enqueued_at).total_seconds())
        make_due()
        run_tasks()

    # Attempts 1 to 3 failed and were retried after ~10, ~20, ~40 s (jittered); the
    # fourth was the last.
    assert len(delays) == 3
    for n, delay in enumerate(delays):
        assert 10 * 2**n / 2 - 1 <= delay <= 10 * 2**n + 1
    assert len(sends(graph)) == 4
    owed = only_auto_reply()
    assert (owed.state, owed.attempts) == ("failed", 4)
    assert "Service temporarily unavailable" in owed.last_error


def test_a_refusal_is_recorded_once_and_not_retried(cloud_webhook_org, hours, graph):
    graph.reply(400, graph_error(131047, "Re-engagement message"))
    deliver(cloud_webhook_org, envelope(text_message("hours?")))

    run_tasks()

    owed = only_auto_reply()
    assert (owed.state, owed.attempts) == ("failed", 1)
    assert "131047" in owed.last_error
    assert not tasks(SEND).filter(status="READY").exists()
    failed = Chat.objects.get(type="outbound")
    assert (failed.status, failed.error_code) == ("failed", 131047)
    assert len(sends(graph)) == 1


def test_an_organization_whose_channel_lost_its_settings_fails_the_reply_once(
    cloud_webhook_org, hours, graph
):
    deliver(cloud_webhook_org, envelope(text_message("hours?")))
    set_channel(cloud_webhook_org, access_token="")

    run_tasks()

    owed = only_auto_reply()
    assert owed.state == "failed" and "whatsapp" in owed.last_error.lower()
    assert sends(graph) == []
    assert not tasks(SEND).filter(status="READY").exists()
