"""API sends and auto-replies whose outcome is unknown (no answer came, or the run sending
died during the call), settled by their status webhooks (): the
status's biz_opaque_callback_data (`chat:<uuid>`) names the chat recorded for the send,
which takes WhatsApp's message id and moves from `accepted` forward, with the events a
send emits; once, whatever the redeliveries and races; and the statuses that came
before the chat was recorded settle it as it is recorded.

The statuses are pywa's real `with_tracker` status webhook (a status carrying the send's
callback data, with its pricing and conversation; tests/inbound/payloads/pywa_statuses.json
names its source), for another message, status and callback data."""

import copy
import json
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.utils import timezone

from business_numbers.models import Number
from contacts.models import Contact
from events import services as event_services
from events.delivery import fan_out_all
from events.models import Delivery
from inbound.auto_replies import send_auto_reply
from sending.models import AutoReply, Chat, ChatStatusEvent
from sending.services import send as send_module
from sending.services.settlement import auto_reply_chat_uuid
from tests.background import run_tasks, tasks
from tests.channel import set_channel
from tests.contacts.test_contact_counter import run_concurrently
from tests.databases import on_postgresql
from tests.factories import create_chat
from tests.inbound.conftest import APP_SECRET, answer_hours, deliver, envelope, text_message

pytestmark = pytest.mark.django_db

PAYLOADS = Path(__file__).parent.parent / "inbound" / "payloads"
PHONE = "4915123456000"


@pytest.fixture
def org(cloud_org, settings):
    """Organization A on the fake Cloud API, its webhook signed, an event endpoint
    listening (on a closed port: the deliveries are only counted)."""
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    set_channel(cloud_org, app_secret=APP_SECRET)
    event_services.create_endpoint(organization=cloud_org, url="http://127.0.0.1:9/events")
    return cloud_org


@pytest.fixture
def hours(org):
    return answer_hours(org)


def tracked_status(wam_id: str, name: str, callback: str, *, at: int | None = None) -> dict:
    fixtures = json.loads((PAYLOADS / "pywa_statuses.json").read_text())
    payload = copy.deepcopy(fixtures["payloads"]["with_tracker"])
    value = payload["entry"][0]["changes"][0]["value"]
    value["metadata"]["phone_number_id"] = (
        Number.objects.exclude(phone_number_id="").get().phone_number_id
    )
    value["statuses"][0].update(
        id=wam_id,
        status=name,
        biz_opaque_callback_data=callback,
        recipient_id=PHONE,
        timestamp=str(at or int(timezone.now().timestamp())),
    )
    return payload


def sends(graph) -> list:
    return [r for r in graph.requests if r.method == "POST" and r.path.endswith("/messages")]


def events(name: str) -> int:
    fan_out_all()
    return Delivery.objects.filter(event=name).count()


def timed_out_send(api, graph, settings):
    """POST /api/send that gets no answer in time: 504, and the failed chat it recorded."""
    settings.WHATSAPP_TIMEOUT = 0.3
    graph.reply(status=200, json=None, delay=1)
    response = api.post("/api/send", {"phone": f"+{PHONE}", "message": "Hi"}, format="json")
    assert response.status_code == 504, response.json()
    return Chat.objects.get(type="outbound")


def test_a_timed_out_api_send_is_recorded_under_the_uuid_its_message_names(
    api, org, graph, settings
):
    chat = timed_out_send(api, graph, settings)

    [sent] = sends(graph)
    assert sent.json["biz_opaque_callback_data"] == f"chat:{chat.uuid}"
    assert (chat.status, chat.wam_id) == ("failed", None)


def test_its_status_webhook_settles_it_once_with_the_events_of_a_send(api, org, graph, settings):
    chat = timed_out_send(api, graph, settings)
    assert events("message.sent") == 0
    callback = f"chat:{chat.uuid}"

    delivered = tracked_status("wamid.LOST1", "delivered", callback)
    for _ in range(2):  # redelivered as it was (its timestamp too): nothing more
        response = deliver(org, delivered)
        assert response.status_code == 200

    chat.refresh_from_db()
    assert (chat.wam_id, chat.status, chat.error_code, chat.error_title, chat.error_details) == (
        "wamid.LOST1",
        "delivered",
        None,
        "",
        None,
    )
    [status] = ChatStatusEvent.objects.all()
    assert status.chat_id == chat.pk
    assert status.pricing == {"billable": True, "pricing_model": "CBP", "category": "service"}
    assert status.conversation["id"] == "7270432eae37498234f4444b35ffc5"
    assert (events("message.sent"), events("message.status.update")) == (1, 1)
    shown = api.get(f"/api/chats/{chat.uuid}").json()["data"]
    assert (shown["status"], shown["wam_id"]) == ("delivered", "wamid.LOST1")

    # The next status moves it on as any chat's does.
    deliver(org, tracked_status("wamid.LOST1", "read", callback))
    chat.refresh_from_db()
    assert chat.status == "read"
    assert (events("message.sent"), events("message.status.update")) == (1, 2)


def test_a_status_naming_another_organizations_chat_or_no_chat_settles_nothing(
    api, api_b, org, org_b, graph, settings
):
    chat = timed_out_send(api, graph, settings)
    other = create_chat(organization=org_b, contact=chat.contact, status="failed")
    for n, callback in enumerate(
        (f"chat:{other.uuid}", f"chat:{uuid.uuid4()}", "chat:not-a-uuid", f"{chat.uuid}")
    ):
        assert deliver(org, tracked_status(f"wamid.X{n}", "sent", callback)).status_code == 200

    assert set(Chat.objects.values_list("status", "wam_id")) == {("failed", None)}
    assert ChatStatusEvent.objects.filter(chat__isnull=True).count() == 4


def test_a_status_for_a_chat_sent_with_an_id_does_not_take_it_over(api, org, graph):
    response = api.post("/api/send", {"phone": f"+{PHONE}", "message": "Hi"}, format="json")
    assert response.status_code == 200
    chat = Chat.objects.get(type="outbound")
    known = (chat.wam_id, chat.status)
    assert chat.wam_id

    deliver(org, tracked_status("wamid.OTHER", "delivered", f"chat:{chat.uuid}"))

    chat.refresh_from_db()
    assert (chat.wam_id, chat.status) == known
    assert ChatStatusEvent.objects.get().chat is None  # kept aside, as for any unknown id


def test_statuses_that_came_before_the_send_gave_up_settle_it_as_it_is_recorded(
    api, org, graph, settings, monkeypatch
):
    # WhatsApp took the message and posted its statuses while the send still waited.
    chosen = uuid.uuid4()
    # The send's module alone draws the chosen uuid (the events' ids are drawn too).
    monkeypatch.setattr(send_module, "uuid", SimpleNamespace(uuid4=lambda: chosen, UUID=uuid.UUID))
    deliver(org, tracked_status("wamid.EARLY", "sent", f"chat:{chosen}", at=1700000000))
    deliver(org, tracked_status("wamid.EARLY", "delivered", f"chat:{chosen}", at=1700000001))

    chat = timed_out_send(api, graph, settings)

    assert (chat.uuid, chat.wam_id, chat.status) == (chosen, "wamid.EARLY", "delivered")
    assert ChatStatusEvent.objects.filter(chat=chat).count() == 2
    assert (events("message.sent"), events("message.status.update")) == (1, 1)


def test_a_timed_out_auto_reply_is_settled_by_its_status_and_then_sent(org, hours, graph, settings):
    settings.WHATSAPP_TIMEOUT = 0.3
    graph.reply(status=200, json=None, delay=1)
    deliver(org, envelope(text_message("hours?", sender=PHONE)))
    run_tasks()
    owed = AutoReply.objects.get()
    assert owed.state == "unknown"
    assert owed.reply.uuid == auto_reply_chat_uuid(owed.pk, 1)
    [sent] = sends(graph)
    assert sent.json["biz_opaque_callback_data"] == f"chat:{owed.reply.uuid}"

    deliver(org, tracked_status("wamid.REPLY", "sent", f"chat:{owed.reply.uuid}"))

    owed.refresh_from_db()
    assert (owed.state, owed.last_error) == ("sent", "")
    assert (owed.reply.wam_id, owed.reply.status) == ("wamid.REPLY", "sent")


def died_during_the_call(org, hours) -> AutoReply:
    """The reply as a run that died during the channel call left it: claimed, no chat."""
    deliver(org, envelope(text_message("hours?", sender=PHONE)))
    return AutoReply.objects.create(
        organization=org,
        inbound=Chat.objects.get(type="inbound"),
        canned_reply=hours,
        message="9 to 5",
        state="sending",
        attempts=1,
    )


def test_an_auto_reply_whose_run_died_is_recorded_and_settled_by_its_status(org, hours, graph):
    owed = died_during_the_call(org, hours)

    run_tasks()  # the next run finds the unfinished claim

    assert sends(graph) == []
    owed.refresh_from_db()
    assert owed.state == "unknown"
    chat = owed.reply
    assert (chat.uuid, chat.status, chat.wam_id) == (
        auto_reply_chat_uuid(owed.pk, 1),
        "failed",
        None,
    )
    assert chat.metadata == {"type": "text", "text": {"body": "9 to 5"}}
    assert chat.contact.phone == PHONE

    deliver(org, tracked_status("wamid.DIED", "delivered", f"chat:{chat.uuid}"))

    owed.refresh_from_db()
    chat.refresh_from_db()
    assert owed.state == "sent"
    assert (chat.wam_id, chat.status) == ("wamid.DIED", "delivered")
    assert (events("message.sent"), events("message.status.update")) == (1, 1)


def test_a_lost_reply_is_recorded_as_it_went_out_its_placeholders_filled(org, hours, graph):
    owed = died_during_the_call(org, hours)
    Contact.objects.filter(phone=PHONE).update(first_name="Ana")
    AutoReply.objects.filter(pk=owed.pk).update(message="Hi {first_name}, {nothing} 9 to 5")

    run_tasks()

    owed.refresh_from_db()
    assert owed.state == "unknown"
    assert owed.reply.metadata == {"type": "text", "text": {"body": "Hi Ana, {nothing} 9 to 5"}}


def test_statuses_that_came_before_the_reply_was_marked_unknown_settle_it(org, hours, graph):
    owed = died_during_the_call(org, hours)
    callback = f"chat:{auto_reply_chat_uuid(owed.pk, 1)}"
    deliver(org, tracked_status("wamid.FIRST", "read", callback))

    [task] = tasks("inbound.auto_replies.send_auto_reply")
    assert send_auto_reply.call(**task.args_kwargs["kwargs"]) == "sent"

    owed.refresh_from_db()
    assert owed.state == "sent"
    assert (owed.reply.wam_id, owed.reply.status) == ("wamid.FIRST", "read")
    assert sends(graph) == []


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_one_status_delivered_twice_at_once_settles_the_chat_once(api, org, graph, settings):
    chat = timed_out_send(api, graph, settings)
    payload = tracked_status("wamid.RACE", "delivered", f"chat:{chat.uuid}")

    codes = run_concurrently([lambda: deliver(org, payload).status_code] * 2)

    assert codes == [200, 200]
    chat.refresh_from_db()
    assert (chat.wam_id, chat.status) == ("wamid.RACE", "delivered")
    assert ChatStatusEvent.objects.filter(chat=chat).count() == 1
    assert not ChatStatusEvent.objects.filter(chat__isnull=True).exists()
    assert (events("message.sent"), events("message.status.update")) == (1, 1)


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_status_racing_the_recording_of_the_unknown_reply_settles_it(org, hours, graph):
    owed = died_during_the_call(org, hours)
    callback = f"chat:{auto_reply_chat_uuid(owed.pk, 1)}"
    kwargs = tasks("inbound.auto_replies.send_auto_reply").get().args_kwargs["kwargs"]

    outcomes = run_concurrently(
        [
            lambda: send_auto_reply.call(**kwargs),
            lambda: deliver(org, tracked_status("wamid.RACE2", "sent", callback)).status_code,
        ]
    )

    assert outcomes[1] == 200 and outcomes[0] in ("sent", "unknown")
    owed.refresh_from_db()
    assert owed.state == "sent"
    assert (owed.reply.wam_id, owed.reply.status) == ("wamid.RACE2", "sent")
    assert not ChatStatusEvent.objects.filter(chat__isnull=True).exists()
    assert events("message.sent") == 1
