"""The sandbox behaves like WhatsApp (docs/channel.md, "The sandbox"): what it accepts
moves to sent, delivered and read through the status webhook's own path (the chat, its
history, the message.status.update events, a campaign's counts), after
SANDBOX_STATUS_DELAYS; a template it does not know is refused with WhatsApp's error
132001 and a failed chat; it knows hello_world and every approved template of the
number."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from business_numbers.models import Number
from business_numbers.services import sync_templates
from campaigns.models import Campaign
from devtools.webhook_receiver import WebhookReceiver
from events import services as events
from inbound.tasks import play_sandbox_statuses
from sending.models import Chat
from tests.background import make_due, run_tasks, tasks
from tests.sending.factories import MessageTemplateFactory

pytestmark = pytest.mark.django_db

PHONE = "+14155552671"
PLAYER = "inbound.tasks.play_sandbox_statuses"
NO_PARAMETERS = [{"type": "BODY", "text": "Your order has shipped."}]


@pytest.fixture
def delays(settings):
    # Long enough that none comes due by itself on a loaded machine: make_due() brings
    # each forward, as the passing of time would.
    settings.SANDBOX_STATUS_DELAYS = [30.0, 30.0, 60.0]
    return settings.SANDBOX_STATUS_DELAYS


def next_status_comes() -> None:
    """The next deferred status is due, and a worker runs it."""
    assert make_due() == 1
    run_tasks()


@pytest.fixture
def receiver(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # a real receiver, on loopback
    with WebhookReceiver() as server:
        yield server


def status_events(receiver) -> list[tuple[str, str]]:
    """The chats the endpoint was told moved: each one's status and message id."""
    bodies = [json.loads(request.body) for request in receiver.requests]
    return [
        (body["data"]["status"], body["data"]["wam_id"])
        for body in bodies
        if body["type"] == "message.status.update"
    ]


def send_template(api, name: str, language: str = "en_US"):
    template = {"name": name, "language": {"code": language}}
    return api.post("/api/send/template", {"phone": PHONE, "template": template}, format="json")


def test_an_accepted_message_is_sent_delivered_and_read_as_its_webhooks_come(
    api, org_a, delays, receiver
):
    events.create_endpoint(organization=org_a, url=receiver.url, events=["message.status.update"])
    before = timezone.now()
    response = api.post("/api/send", {"phone": PHONE, "message": "Your order has shipped"})
    assert response.status_code == 200, response.json()
    chat = Chat.objects.get()
    assert chat.status == "accepted"
    [task] = tasks(PLAYER)
    assert task.run_after >= before + timedelta(seconds=30)  # the first delay

    run_tasks()  # not due yet: a worker leaves it for its time
    chat.refresh_from_db()
    assert chat.status == "accepted"
    seen = []
    for _ in range(3):
        next_status_comes()
        chat.refresh_from_db()
        seen.append(chat.status)

    assert seen == ["sent", "delivered", "read"]
    assert make_due() == 0  # nothing after read
    history = api.get(f"/api/chats/{chat.uuid}").json()["data"]["statuses"]
    assert [entry["status"] for entry in history] == ["sent", "delivered", "read"]
    assert status_events(receiver) == [(status, chat.wam_id) for status in seen]


def test_fewer_delays_stop_earlier(api, org_a, settings):
    settings.SANDBOX_STATUS_DELAYS = [30.0]
    api.post("/api/send", {"phone": PHONE, "message": "Hi"})

    next_status_comes()

    assert Chat.objects.get().status == "sent"
    assert make_due() == 0


def test_a_status_played_twice_is_stored_once(api, org_a, delays):
    api.post("/api/send", {"phone": PHONE, "message": "Hi"})
    [task] = tasks(PLAYER)
    next_status_comes()
    # A worker that died after the commit: the same run again.
    play_sandbox_statuses.call(*task.args_kwargs["args"])

    chat = Chat.objects.get()
    assert list(chat.status_events.values_list("status", flat=True)) == ["sent"]


def test_a_campaign_counts_the_sandboxs_statuses_as_real_ones(api, org_a, delays, settings):
    settings.CAMPAIGN_THREADS = settings.CAMPAIGN_SENDERS = 1  # as tests/campaigns send
    body = {
        "name": "Launch",
        "template": {"name": "hello_world", "language": {"code": "en_US"}},
        "phones": ["+4915123456000", "+4915123456001"],
        "rate": 1000,
    }
    uuid = api.post("/api/campaigns", body, format="json").json()["id"]
    run_tasks()
    # One task per recording batch: the two sends may be answered in one or in two,
    # as the machine's pace has it. Each run brings the next step of its batch.
    for _ in range(3):
        assert make_due() in (1, 2)
        run_tasks()
    assert make_due() == 0  # nothing after read

    data = api.get(f"/api/campaigns/{uuid}").json()["data"]
    assert (data["total"], data["sent"], data["delivered"], data["read"]) == (2, 2, 2, 2)
    assert Campaign.objects.get().status == "completed"


def test_an_unknown_template_is_refused_as_whatsapp_refuses_it(api, org_a, delays):
    response = send_template(api, "no_such_template")

    assert response.status_code == 422
    error = response.json()["channel_error"]
    assert error["code"] == 132001
    assert error["message"] == "(#132001) Template name does not exist in the translation"
    assert error["details"] == "template name (no_such_template) does not exist in en_US"
    chat = Chat.objects.get()
    assert (chat.status, chat.error_code) == ("failed", 132001)
    assert not tasks(PLAYER).exists()  # a refused message gets no statuses


def test_hello_world_in_another_language_is_unknown(api, org_a):
    assert send_template(api, "hello_world", "pt_BR").status_code == 422
    assert send_template(api, "hello_world").status_code == 200


def test_the_numbers_approved_templates_are_known_and_no_one_elses(api, org_a, org_b):
    MessageTemplateFactory(organization=org_a, name="shipped", components=NO_PARAMETERS)
    MessageTemplateFactory(organization=org_b, name="theirs", components=NO_PARAMETERS)
    other_number = Number.objects.create(organization=org_a, label="Second")
    MessageTemplateFactory(
        organization=org_a, number=other_number, name="elsewhere", components=NO_PARAMETERS
    )

    assert send_template(api, "shipped").status_code == 200
    assert send_template(api, "theirs").status_code == 422
    assert send_template(api, "elsewhere").status_code == 422


def test_a_sync_from_the_sandbox_keeps_the_templates_written_for_it(org_a):
    number = Number.objects.default_for(org_a)
    mine = MessageTemplateFactory(organization=org_a, name="shipped", components=NO_PARAMETERS)

    result = sync_templates(number=number)

    assert result.removed == 0
    mine.refresh_from_db()
    assert mine.deleted_at is None and mine.status == "APPROVED"
    assert number.templates.live().filter(name="hello_world").exists()
