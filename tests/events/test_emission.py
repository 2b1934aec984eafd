"""Every event is emitted by the service that makes the change, whoever called it (the
API, the channel's webhook, a command), in the same transaction, and costs one query
when nobody listens."""

import json

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from accounts.models import Organization
from contacts.selectors import live_contact_count
from events import services
from events.models import Delivery, Emission
from events.services import emit_event
from sending.models import Chat
from tests.channel import set_channel
from tests.events.conftest import deliveries, run_all, verified
from tests.factories import CannedReplyFactory, ContactFactory, ContactGroupFactory
from tests.inbound.conftest import APP_SECRET, deliver, envelope, status, statuses, text_message
from tests.sending.factories import ChatFactory

pytestmark = pytest.mark.django_db


def bodies() -> list[dict]:
    """The bodies of the deliveries, once a worker has fanned the emissions out."""
    return [json.loads(d.body) for d in deliveries()]


def forget_events(**filters) -> None:
    """Drop the events emitted so far (those of the test's setup), once fanned out."""
    deliveries()
    Delivery.objects.filter(**filters).delete()


def events() -> list[str]:
    return [body["type"] for body in bodies()]


@pytest.fixture
def listening(org_a):
    """An endpoint of organization A that wants every event (never posted to here)."""
    return services.create_endpoint(organization=org_a, url="https://example.com/hook")


@pytest.fixture
def webhook_org(org_a):
    set_channel(org_a, app_secret=APP_SECRET)
    return org_a


def test_an_inbound_message_is_message_received_with_the_chat_as_the_api_shows_it(
    api, webhook_org, listening
):
    deliver(webhook_org, envelope(text_message("Hello there", wam_id="wamid.IN1")))
    assert events() == ["contact.created", "conversation.created", "message.received"]
    chat = Chat.objects.get(wam_id="wamid.IN1")
    assert bodies()[2]["data"] == api.get(f"/api/chats/{chat.uuid}").json()["data"]


def test_a_stop_from_a_customer_is_contact_updated_with_opted_out(api, webhook_org, listening):
    deliver(webhook_org, envelope(text_message("Hello", wam_id="wamid.IN1")))
    deliver(webhook_org, envelope(text_message("STOP", wam_id="wamid.IN2")))
    deliver(webhook_org, envelope(text_message("STOP", wam_id="wamid.IN3")))  # no change
    assert events() == [
        "contact.created",
        "conversation.created",
        "message.received",
        "message.received",
        "contact.updated",
        "message.received",
    ]
    updated = bodies()[4]["data"]
    assert updated["opted_out"] == 1
    assert updated == api.get(f"/api/contacts/{updated['uuid']}").json()["data"]


def test_a_profile_name_is_the_new_contacts_first_name_or_an_update_of_a_nameless_one(
    api, webhook_org, listening
):
    deliver(webhook_org, envelope(text_message("Hi", sender="14155552671", name="Ada")))
    nameless = ContactFactory(organization=webhook_org, phone="14155552672", first_name=None)
    named = ContactFactory(organization=webhook_org, phone="14155552673", first_name="Grace")
    deliver(webhook_org, envelope(text_message("Hi", sender=nameless.phone, name="Bo")))
    deliver(webhook_org, envelope(text_message("Hi", sender=named.phone, name="Nickname")))
    created, updated = (b["data"] for b in bodies() if b["type"].startswith("contact."))
    assert created["first_name"] == "Ada"
    assert (updated["uuid"], updated["first_name"]) == (str(nameless.uuid), "Bo")
    named.refresh_from_db()
    assert named.first_name == "Grace"  # a name someone gave is kept
    assert events().count("contact.updated") == 1


def test_a_message_delivered_twice_is_received_once(webhook_org, listening):
    payload = envelope(text_message("Hello", wam_id="wamid.IN1"))
    deliver(webhook_org, payload)
    deliver(webhook_org, payload)
    assert events().count("message.received") == 1


def test_a_command_emits_too(webhook_org, listening):
    call_command("simulate_inbound", str(webhook_org.uuid), "+14155552671", "Hi")
    assert events() == ["contact.created", "conversation.created", "message.received"]


def test_a_sent_message_is_message_sent(api, org_a, listening):
    response = api.post("/api/send", {"phone": "+14155552671", "message": "Hi"}, format="json")
    assert response.status_code == 200
    assert events() == ["contact.created", "conversation.created", "message.sent"]
    chat = Chat.objects.get(type="outbound")
    assert bodies()[2]["data"] == api.get(f"/api/chats/{chat.uuid}").json()["data"]
    assert bodies()[2]["data"]["status"] == "accepted"


def test_a_refused_send_is_not_message_sent(api, cloud_org, graph, listening):
    from devtools.cloud_api_server import graph_error

    graph.reply(400, graph_error(131047, "Re-engagement message"))
    api.post("/api/send", {"phone": "+14155552671", "message": "Hi"}, format="json")
    assert "message.sent" not in events()


def test_an_auto_reply_is_message_sent(webhook_org, listening):
    from tests.background import run_tasks

    CannedReplyFactory(organization=webhook_org, trigger="hello", match_criteria="contains")
    forget_events()
    deliver(webhook_org, envelope(text_message("hello", wam_id="wamid.IN1")))
    forget_events(event__in=["message.received", "contact.created"])
    run_tasks()  # the auto-reply; the deliveries to example.com fail, which is fine here
    assert "message.sent" in events()


def test_each_chat_moved_forward_is_one_status_update(api, webhook_org, listening):
    first = ChatFactory(organization=webhook_org, wam_id="wamid.OUT1")
    second = ChatFactory(organization=webhook_org, wam_id="wamid.OUT2")
    forget_events()
    deliver(
        webhook_org,
        envelope(
            statuses(
                status("wamid.OUT1", "sent", 100),
                status("wamid.OUT1", "delivered", 101),
                status("wamid.OUT2", "sent", 100),
            )
        ),
    )
    found = {(b["data"]["uuid"], b["data"]["status"]) for b in bodies()}
    assert events() == ["message.status.update"] * 2
    assert found == {(str(first.uuid), "delivered"), (str(second.uuid), "sent")}
    [moved] = [b["data"] for b in bodies() if b["data"]["uuid"] == str(first.uuid)]
    assert moved == api.get(f"/api/chats/{first.uuid}").json()["data"]
    assert [s["status"] for s in moved["statuses"]] == ["sent", "delivered"]
    # The same statuses again, or an older one: nothing moves, nothing is emitted.
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "sent", 100))))
    deliver(webhook_org, envelope(statuses(status("wamid.OUT1", "sent", 99))))
    assert len(bodies()) == 2


def test_a_failed_status_is_a_status_update_with_the_error(webhook_org, listening):
    chat = ChatFactory(organization=webhook_org, wam_id="wamid.OUT1")
    forget_events()
    failed = status(
        "wamid.OUT1", "failed", 100, errors=[{"code": 131026, "title": "Undeliverable"}]
    )
    deliver(webhook_org, envelope(statuses(failed)))
    [body] = bodies()
    assert body["type"] == "message.status.update"
    assert body["data"]["uuid"] == str(chat.uuid)
    assert body["data"]["status"] == "failed"
    assert body["data"]["error"]["code"] == 131026


def test_contacts_and_groups_created_updated_deleted(api, org_a, listening):
    group = api.post("/api/contact-groups", {"name": "VIP"}, format="json").json()["id"]
    api.put(f"/api/contact-groups/{group}", {"name": "VIPs"}, format="json")
    contact = api.post(
        "/api/contacts", {"phone": "+14155552671", "first_name": "Ada"}, format="json"
    ).json()["id"]
    api.patch(f"/api/contacts/{contact}", {"last_name": "Lovelace"}, format="json")
    api.delete(f"/api/contacts/{contact}")
    api.delete(f"/api/contact-groups/{group}")
    assert events() == [
        "group.created",
        "group.updated",
        "contact.created",
        "contact.updated",
        "contact.deleted",
        "group.deleted",
    ]
    found = bodies()
    assert found[1]["data"]["name"] == "VIPs"
    assert found[3]["data"]["full_name"] == "Ada Lovelace"
    assert set(found[4]["data"]) == {"uuid", "deleted_at"}
    assert found[4]["data"]["uuid"] == contact
    assert found[5]["data"]["uuid"] == group
    assert found[5]["data"]["deleted_at"].endswith("Z")  # groups' date style


def test_autoreplies_created_updated_deleted(api, org_a, listening):
    body = {
        "name": "Hours",
        "trigger": "hours",
        "match_criteria": "contains",
        "response_type": "text",
        "response": "9 to 5",
    }
    uuid = api.post("/api/canned-replies", body, format="json").json()["id"]
    api.patch(f"/api/canned-replies/{uuid}", {"response": "10 to 6"}, format="json")
    api.delete(f"/api/canned-replies/{uuid}")
    assert events() == ["autoreply.created", "autoreply.updated", "autoreply.deleted"]
    found = bodies()
    assert json.loads(found[1]["data"]["metadata"])["data"]["text"] == "10 to 6"
    assert found[2]["data"]["uuid"] == uuid


def test_the_autoreply_event_is_the_reply_as_listed(api, org_a, listening):
    body = {
        "name": "Hours",
        "trigger": "hours",
        "match_criteria": "contains",
        "response_type": "text",
        "response": "9 to 5",
    }
    api.post("/api/canned-replies", body, format="json")
    [listed] = api.get("/api/canned-replies").json()["data"]
    assert bodies()[0]["data"] == listed


def test_another_organizations_changes_are_not_sent(api_b, listening):
    api_b.post("/api/contacts", {"phone": "+14155552671", "first_name": "Bo"}, format="json")
    assert events() == []


def test_an_event_is_emitted_with_its_change_or_not_at_all(org_a, listening):
    from contacts.services import create_contact

    with pytest.raises(RuntimeError), transaction.atomic():
        create_contact(organization=org_a, phone="14155552671", first_name="Ada")
        raise RuntimeError("the caller's transaction rolls back")
    assert events() == []


def test_emitting_to_nobody_costs_one_query(org_a):
    with CaptureQueriesContext(connection) as queries:
        assert emit_event(organization_id=org_a.pk, event="contact.created", data=dict) == 0
    assert len(queries) == 1


def test_emitting_to_an_endpoint_that_does_not_want_the_event_costs_one_query(org_a):
    services.create_endpoint(
        organization=org_a, url="https://example.com/hook", events=["message.received"]
    )
    built = []
    with CaptureQueriesContext(connection) as queries:
        emit_event(organization_id=org_a.pk, event="contact.created", data=lambda: built.append(1))
    assert len(queries) == 1
    assert built == []  # the payload was never built


def test_emitting_to_two_endpoints_is_one_insert_of_one_row(org_a, django_assert_num_queries):
    from tests.background import tasks

    for n in range(2):
        services.create_endpoint(organization=org_a, url=f"https://example.com/{n}")
    # the endpoints; the emission's insert (no task: the rows are the workers' queue)
    with django_assert_num_queries(2):
        assert emit_event(organization_id=org_a.pk, event="group.created", data={"x": 1}) == 2
    assert not tasks().exists()
    [emission] = Emission.objects.all()
    ids = [endpoint.pk for endpoint in services.listening_endpoints(org_a.pk)]
    assert emission.endpoints == ",".join(map(str, ids))
    assert Delivery.objects.count() == 0  # until a worker fans it out
    assert len(deliveries()) == 2 and not Emission.objects.exists()


def test_a_batch_looks_the_endpoints_up_once_and_inserts_once(org_a, django_assert_num_queries):
    for n in range(2):
        services.create_endpoint(organization=org_a, url=f"https://example.com/{n}")
    # savepoint, the endpoints (once for the three events), this test's count, one
    # INSERT of the three emissions, release of the savepoint (a test runs in a transaction)
    with django_assert_num_queries(5) as captured, services.event_batch():
        for n in range(3):
            emit_event(organization_id=org_a.pk, event="group.created", data={"n": n})
        assert Emission.objects.count() == 0  # kept aside until the batch ends
    inserts = [q["sql"] for q in captured.captured_queries if q["sql"].startswith("INSERT")]
    assert len(inserts) == 1
    assert Emission.objects.count() == 3
    assert [body["data"]["n"] for body in bodies()] == [0, 0, 1, 1, 2, 2]
    assert Delivery.objects.values("msg_id").distinct().count() == 6


def test_an_inbound_webhook_of_new_senders_is_one_lookup_and_one_insert(webhook_org, listening):
    """Three messages from new senders: three contact.created, conversation.created and
    message.received, whatever the number of messages one lookup and one insert."""
    payload = envelope(
        *(text_message(f"Hi {n}", sender=f"1415555267{n}", name=f"N{n}") for n in range(3))
    )
    with CaptureQueriesContext(connection) as queries:
        assert deliver(webhook_org, payload).status_code == 200
    sql = [q["sql"] for q in queries.captured_queries]
    assert sum("events_emission" in s and s.startswith("INSERT") for s in sql) == 1
    assert not any("events_delivery" in s for s in sql)
    assert sum("events_endpoint" in s and "is_active" in s for s in sql) == 1
    assert sorted(events()) == (
        ["contact.created"] * 3 + ["conversation.created"] * 3 + ["message.received"] * 3
    )


def test_the_events_of_a_savepoint_rolled_back_are_dropped(org_a, listening):
    with services.event_batch():
        emit_event(organization_id=org_a.pk, event="group.created", data={"n": "kept"})
        with pytest.raises(RuntimeError), transaction.atomic():
            emit_event(organization_id=org_a.pk, event="group.created", data={"n": "dropped"})
            with transaction.atomic():  # a savepoint within, released, rolled back with it
                emit_event(organization_id=org_a.pk, event="group.updated", data={"n": "in"})
            raise RuntimeError("this savepoint rolls back")
        with transaction.atomic():
            emit_event(organization_id=org_a.pk, event="group.deleted", data={"n": "after"})
    assert [(b["type"], b["data"]["n"]) for b in bodies()] == [
        ("group.created", "kept"),
        ("group.deleted", "after"),
    ]


def test_a_duplicate_message_in_a_webhook_leaves_no_events(webhook_org, listening):
    """The second copy of a message meets the unique message id: its savepoint (with
    its message.received) is rolled back, the first copy's events stay."""
    message = text_message("Hello", wam_id="wamid.TWICE")
    payload = envelope(message)
    payload["entry"][0]["changes"].append(payload["entry"][0]["changes"][0])
    response = deliver(webhook_org, payload)
    assert response.json()["processed"]["duplicates"] == 1
    assert sorted(events()) == ["contact.created", "conversation.created", "message.received"]


def test_a_webhooks_contact_count_is_written_last(webhook_org, listening):
    """The count's row is every new sender's: written after the emissions, just before
    the commit, so that the organization's webhooks wait for each other only that long
    (with the count of conversations, inbox/queries.py, and the day's figures, analytics,
    after it). A second copy of the message (its savepoint rolled back) counts nothing."""
    message = text_message("Hello", wam_id="wamid.COUNTED", sender="14155552671")
    payload = envelope(message)
    payload["entry"][0]["changes"].append(payload["entry"][0]["changes"][0])
    with CaptureQueriesContext(connection) as queries:
        assert deliver(webhook_org, payload).json()["processed"]["duplicates"] == 1
    sql = [q["sql"] for q in queries.captured_queries]
    counts = [n for n, s in enumerate(sql) if "contacts_contactblock" in s]
    emitted = [n for n, s in enumerate(sql) if s.startswith("INSERT") and "events_emission" in s]
    assert len(counts) == 1 and len(emitted) == 1
    rest = [
        s
        for s in sql[counts[0] + 1 :]
        if "inbox_conversationtotal" not in s and "analytics_" not in s
    ]
    assert all(s.startswith("RELEASE SAVEPOINT") for s in rest)
    # The insert, then the count, last: in one round trip on PostgreSQL, one by one on SQLite.
    if connection.vendor == "postgresql":
        together = sql[counts[0]]
        assert counts == emitted
        assert together.index("events_emission") < together.index("contacts_contactblock")
    else:
        assert counts[0] == emitted[0] + 1
    assert live_contact_count(organization_id=webhook_org.pk) == 1


def test_a_deferred_statement_runs_before_the_commit_unless_rolled_back(org_a):
    rename = "UPDATE accounts_organization SET name = %s WHERE id = %s"

    def name():
        return Organization.objects.get(pk=org_a.pk).name

    with services.event_batch():
        services.at_batch_end(rename, ["kept", org_a.pk])
        with pytest.raises(RuntimeError), transaction.atomic():
            services.at_batch_end(rename, ["dropped", org_a.pk])
            raise RuntimeError("this savepoint rolls back")
        assert name() == org_a.name  # kept for the end of the batch
    assert name() == "kept"
    services.at_batch_end(rename, ["outside a batch", org_a.pk])  # executed at once
    assert name() == "outside a batch"


def test_a_batch_rolled_back_writes_nothing(org_a, listening):
    with pytest.raises(RuntimeError), services.event_batch():
        emit_event(organization_id=org_a.pk, event="group.created", data={"n": 1})
        raise RuntimeError("the whole transaction rolls back")
    assert events() == []


def test_the_admins_saves_emit_too(org_a, listening):
    """The admin saves through the same services (their own tests show that): a save
    through the service emits whoever calls it."""
    from contacts.services import update_contact

    contact = ContactFactory(organization=org_a)
    update_contact(contact=contact, changes={"first_name": "Zed"})
    assert events() == ["contact.updated"]


def test_a_real_receiver_gets_the_inbound_message(webhook_org, receiver):
    endpoint = services.create_endpoint(
        organization=webhook_org, url=receiver.url, events=["message.received"]
    )
    deliver(webhook_org, envelope(text_message("Hello there", wam_id="wamid.IN1")))
    run_all()
    [request] = receiver.requests
    body = verified(endpoint, request)
    assert body["type"] == "message.received"
    assert json.loads(body["data"]["metadata"]) == {"type": "text", "text": {"body": "Hello there"}}


def test_a_group_given_directly_emits(org_a, listening):
    ContactGroupFactory(organization=org_a)  # a factory bypasses the services: no event
    assert events() == []
