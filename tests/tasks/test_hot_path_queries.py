"""The statements the busiest paths take, pinned: an inbound message that an auto-reply
answers (the webhook, then the reply's task). Each is a round trip and CPU on both
sides; a change that adds one should say why in its commit message."""

from django.db import connection

from tests.background import run_tasks
from tests.inbound.conftest import deliver, envelope, text_message

ON_POSTGRESQL = connection.vendor == "postgresql"


def test_a_message_from_a_new_sender_that_a_reply_answers(
    cloud_webhook_org, hours, django_assert_num_queries
):
    # organization with its channel and opt-out words, and (PostgreSQL: in the same
    # round trip) its endpoints; BEGIN; the message's savepoint;
    # the contact looked up; its insert (in the message's savepoint: a contact created
    # meanwhile rolls the message back and it is recorded again), its live count (on
    # PostgreSQL at the event batch's end); the conversation of the contact and the number
    # found or made (one upsert); the chat; the reply's index version (cache); the organization's auto-replies waiting (its turn), the
    # reply's task and its organization (its AutoReply is written by the task's run);
    # the release; at the event batch's end the count of contacts and of conversations
    # (inbox/queries.py), the conversation waiting for staff's first answer from now and
    # the day's figures (analytics): one round trip on PostgreSQL, one statement each on
    # SQLite; COMMIT
    with django_assert_num_queries(14 if ON_POSTGRESQL else 18):
        response = deliver(cloud_webhook_org, envelope(text_message("hours?")))
    assert response.json()["processed"]["messages"] == 1


def test_a_message_from_a_known_sender_that_a_reply_answers(
    cloud_webhook_org, hours, django_assert_num_queries
):
    deliver(cloud_webhook_org, envelope(text_message("hi")))
    # as above, the contact found and nothing done to it, its conversation upserted (and the
    # reply's index version remembered from the first message), the day's figures
    with django_assert_num_queries(12 if ON_POSTGRESQL else 13):
        response = deliver(cloud_webhook_org, envelope(text_message("hours?")))
    assert response.json()["processed"]["messages"] == 1


def test_the_auto_reply_task(cloud_webhook_org, hours, graph, django_assert_num_queries):
    deliver(cloud_webhook_org, envelope(text_message("hours?")))
    # the task claimed; the reply claimed (its AutoReply written); the reply with its
    # organization, number, message and contact; BEGIN, (PostgreSQL: the message id
    # held), the conversation read, the chat, endpoints for message.sent, statuses kept
    # for it, the reply sent, at the batch's end the conversation's time and the day's
    # figures (analytics; one round trip on PostgreSQL), COMMIT; the task's end;
    # (the look for another task, none); the look for events to fan out, none (on
    # PostgreSQL its one statement; SQLite's DELETE, in a savepoint), and for due event
    # deliveries, none (their claim, events/delivery.py); the look for queued statuses,
    # none (inbound/queued_statuses.py). SQLite claims a task in a transaction of four
    # statements (django_tasks_db's), PostgreSQL in one (messaging_project/worker/runner.py).
    with django_assert_num_queries(17 if ON_POSTGRESQL else 24):
        assert run_tasks() == 1
