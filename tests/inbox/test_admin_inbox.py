"""The inbox in the admin, through Django's test client: who sees which conversation,
what the timeline shows, and that each form reaches the inbox services (and, for a
reply, the loopback Cloud API). The browser tests (test_admin_browser.py) add the
script: live updates and the composer's helpers."""

from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from inbox.models import Note
from sending.models import (
    Chat,
    ChatMedia,
    ChatStatus,
    Conversation,
    ConversationStatus,
    MediaState,
)
from tests.admin.conftest import logged_in
from tests.channel import PHONE_NUMBER_ID
from tests.factories import CannedReplyFactory, ContactFactory, create_chat, create_template
from tests.inbound.conftest import deliver
from tests.inbox.admin_setup import (
    CUSTOMER,
    agent_of,
    customer_message,
    delivered,
    manager_of,
    webhook_body,
    with_webhook_secrets,
)

INBOX = "/admin/inbox/"
# The smallest PNG: one transparent pixel.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6300010000050001"
    "0d0a2db40000000049454e44ae426082"
)


@pytest.fixture
def org(cloud_org):
    return with_webhook_secrets(cloud_org)


@pytest.fixture
def manager(org):
    return manager_of(org)


@pytest.fixture
def agent(org):
    return agent_of(org)


def customer_writes(organization, text: str = "Hello, is my order on its way?") -> Conversation:
    response = deliver(organization, webhook_body(customer_message(text)))
    assert response.status_code == 200
    return Conversation.objects.get(organization=organization, contact__phone=CUSTOMER)


def page(client: Client, path: str, **params) -> str:
    response = client.get(path, params)
    assert response.status_code == 200
    return response.content.decode()


def conversation_url(conversation: Conversation, action: str = "") -> str:
    return f"{INBOX}{conversation.uuid}/{action + '/' if action else ''}"


def test_the_list_shows_the_organizations_conversations_with_unread_badges(org, org_b, manager):
    conversation = customer_writes(org)
    customer_writes(org, "Anyone there?")
    theirs = ContactFactory(organization=org_b, first_name="Bravo", last_name="Customer")
    create_chat(organization=org_b, contact=theirs, type="inbound", status="received")

    text = page(logged_in(manager), INBOX)

    assert "Ada Lovelace" in text
    assert 'class="inbox-badge"' in text and ">2</span>" in text
    assert str(conversation.uuid) in text
    assert "Bravo" not in text
    assert "hours left" in text  # the window, just opened by the customer


def test_search_finds_a_conversation_by_name_or_phone(org, manager):
    customer_writes(org)
    other = ContactFactory(organization=org, first_name="Grace", last_name="Hopper")
    create_chat(organization=org, contact=other, type="inbound", status="received")
    client = logged_in(manager)

    assert "Grace Hopper" not in page(client, INBOX, q="lovelace")
    assert "Ada Lovelace" in page(client, INBOX, q="lovelace")
    by_phone = page(client, INBOX, q="5552671")
    assert "Ada Lovelace" in by_phone and "Grace Hopper" not in by_phone


def test_the_tabs_sort_conversations_by_assignee_and_status(org, manager, agent):
    mine = customer_writes(org)
    Conversation.objects.filter(pk=mine.pk).update(assignee=agent)
    other = ContactFactory(organization=org, first_name="Grace", last_name="Hopper")
    create_chat(organization=org, contact=other, type="inbound", status="received")
    client = logged_in(agent)

    assert "Ada Lovelace" in page(client, INBOX, tab="mine")
    assert "Grace Hopper" not in page(client, INBOX, tab="mine")
    assert "Grace Hopper" in page(client, INBOX, tab="unassigned")
    assert "Ada Lovelace" not in page(client, INBOX, tab="unassigned")
    Conversation.objects.filter(pk=mine.pk).update(status=ConversationStatus.RESOLVED)
    assert "Ada Lovelace" in page(client, INBOX, tab="resolved")
    assert "Ada Lovelace" not in page(client, INBOX, tab="all")


def test_an_agent_sees_only_unassigned_conversations_and_their_own(org, manager, agent):
    conversation = customer_writes(org)
    Conversation.objects.filter(pk=conversation.pk).update(assignee=manager)
    client = logged_in(agent)

    assert "Ada Lovelace" not in page(client, INBOX, tab="all")
    assert client.get(conversation_url(conversation)).status_code == 404
    for action, data in [
        ("send", {"message": "hi"}),
        ("note", {"body": "mine now"}),
        ("assign", {"assignee": agent.pk}),
        ("labels", {"labels": "vip"}),
        ("status", {"status": "resolved"}),
    ]:
        assert client.post(conversation_url(conversation, action), data).status_code == 404
    conversation.refresh_from_db()
    assert conversation.assignee == manager
    assert conversation.labels == []
    assert not Note.objects.exists()
    # The manager sees it.
    assert "Ada Lovelace" in page(logged_in(manager), conversation_url(conversation))


def test_another_organizations_conversation_is_not_found(org, org_b, manager):
    theirs = ContactFactory(organization=org_b)
    chat = create_chat(organization=org_b, contact=theirs, type="inbound", status="received")
    client = logged_in(manager)

    assert client.get(conversation_url(chat.conversation)).status_code == 404
    response = client.post(conversation_url(chat.conversation, "status"), {"status": "resolved"})
    assert response.status_code == 404


def test_the_inbox_is_for_logged_in_staff_only(org):
    conversation = customer_writes(org)
    response = Client().get(conversation_url(conversation))
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_opening_a_conversation_reads_it(org, manager):
    conversation = customer_writes(org)
    assert conversation.unread == 1

    page(logged_in(manager), conversation_url(conversation))

    conversation.refresh_from_db()
    assert conversation.unread == 0


def test_the_timeline_shows_each_kind_of_message_and_the_notes_apart(org, manager):
    conversation = customer_writes(org, "Do you have it in blue?")
    contact = conversation.contact
    common = {"organization": org, "contact": contact, "conversation": conversation}
    create_chat(
        **common,
        type="outbound",
        status="read",
        wam_id="wamid.TPL",
        metadata={
            "type": "text",
            "template": {"name": "order_update", "language": "en_US"},
            "text": {"header": None, "body": "Hello Ada, order 42 shipped.", "footer": None},
            "buttons": [{"type": "QUICK_REPLY", "text": "Track it", "value": None}],
        },
    )
    create_chat(
        **common,
        type="inbound",
        status="received",
        wam_id="wamid.TAP",
        metadata={
            "type": "interactive",
            "interactive": {
                "type": "button_reply",
                "button_reply": {"id": "t", "title": "Track it"},
            },
            "text": {"body": "Track it"},
            "context": {"from": "15550001111", "id": "wamid.TPL"},
        },
    )
    create_chat(
        **common,
        type="outbound",
        status="delivered",
        source="business_app",
        wam_id="wamid.ECHO",
        metadata={"type": "text", "text": {"body": "Sent from my phone"}},
    )
    create_chat(
        **common,
        type="outbound",
        status="failed",
        error_code=131026,
        error_title="Message undeliverable",
        metadata={"type": "text", "text": {"body": "Lost"}},
    )
    Note.objects.create(organization=org, conversation=conversation, author=manager, body="VIP")

    text = page(logged_in(manager), conversation_url(conversation))

    assert "Do you have it in blue?" in text
    assert "Template order_update" in text and "Hello Ada, order 42 shipped." in text
    assert "Tapped “Track it”" in text
    assert 'class="inbox-quote">Hello Ada, order 42 shipped.' in text
    assert "Sent from the WhatsApp Business app" in text
    assert 'aria-label="read"' in text and 'aria-label="delivered"' in text
    assert "Message undeliverable (131026)" in text
    assert "Internal note by maria" in text and "VIP" in text


def test_a_reply_reaches_the_cloud_api_and_the_timeline(org, manager, graph):
    conversation = customer_writes(org)
    question = Chat.objects.get(conversation=conversation, type="inbound")
    client = logged_in(manager)

    response = client.post(
        conversation_url(conversation, "send"),
        {"message": "Yes, it left this morning.", "reply_to": str(question.uuid)},
    )

    assert response.status_code == 302
    sent = [r.json for r in graph.requests if r.method == "POST"]
    assert sent[-1]["text"]["body"] == "Yes, it left this morning."
    assert sent[-1]["context"] == {"message_id": question.wam_id}
    reply = Chat.objects.get(conversation=conversation, type="outbound")
    assert reply.created_by == manager.pk
    text = page(client, conversation_url(conversation))
    assert "Yes, it left this morning." in text
    assert '<span class="inbox-author">maria</span>' in text


def test_a_closed_window_takes_templates_only(org, manager, graph):
    conversation = customer_writes(org)
    Conversation.objects.filter(pk=conversation.pk).update(
        last_inbound_at=timezone.now() - timedelta(hours=25)
    )
    template = create_template(
        organization=org,
        name="order_update",
        language="en_US",
        status="APPROVED",
        components=[
            {"type": "BODY", "text": "Hello {{first_name}}, your order {{order}} shipped."}
        ],
    )
    client = logged_in(manager)
    calls = len(graph.requests)

    text = page(client, conversation_url(conversation))
    assert 'data-mode="template"' in text and 'id="inbox-reply-form"' not in text
    # Free text anyway: refused before the Cloud API is called.
    response = client.post(conversation_url(conversation, "send"), {"message": "hi"}, follow=True)
    assert "only a template can be sent" in response.content.decode()
    assert len(graph.requests) == calls

    # The picker asks for the template's variables, the contact's first name filled in
    # (the WhatsApp profile name is the contact's first name).
    text = page(client, conversation_url(conversation), template=template.pk)
    assert 'name="body_first_name" value="Ada Lovelace"' in text
    response = client.post(
        conversation_url(conversation, "send-template"),
        {"template": template.pk, "body_first_name": "Ada", "body_order": "42"},
    )
    assert response.status_code == 302
    sent = graph.requests[-1].json
    assert sent["type"] == "template"
    assert sent["template"]["components"] == [
        {
            "type": "body",
            "parameters": [
                {"type": "text", "text": "Ada", "parameter_name": "first_name"},
                {"type": "text", "text": "42", "parameter_name": "order"},
            ],
        }
    ]
    chat = Chat.objects.filter(conversation=conversation, type="outbound").get()
    assert chat.metadata["text"]["body"] == "Hello Ada, your order 42 shipped."


def test_canned_replies_come_with_the_contacts_details_filled_in(org, manager):
    conversation = customer_writes(org)
    CannedReplyFactory(
        organization=org,
        name="Greeting",
        metadata={"type": "text", "data": {"text": "Hi {{first_name}}, how can we help?"}},
    )

    text = page(logged_in(manager), conversation_url(conversation))

    assert '<option value="Hi Ada Lovelace, how can we help?">Greeting</option>' in text


def test_assign_label_resolve_and_reopen_through_the_services(org, manager, agent):
    conversation = customer_writes(org)
    client = logged_in(manager)

    client.post(conversation_url(conversation, "assign"), {"assignee": agent.pk})
    client.post(conversation_url(conversation, "labels"), {"labels": "vip, billing, vip"})
    client.post(conversation_url(conversation, "status"), {"status": "resolved"})
    conversation.refresh_from_db()
    assert (conversation.assignee, conversation.labels) == (agent, ["vip", "billing"])
    assert conversation.status == ConversationStatus.RESOLVED

    client.post(conversation_url(conversation, "status"), {"status": "open"})
    client.post(conversation_url(conversation, "note"), {"body": "Called them back."})
    conversation.refresh_from_db()
    assert conversation.status == ConversationStatus.OPEN
    assert Note.objects.get(conversation=conversation).author == manager


def test_only_the_organizations_staff_can_be_assigned(org, org_b, manager):
    conversation = customer_writes(org)
    stranger = manager_of(org_b, "bob")

    response = logged_in(manager).post(
        conversation_url(conversation, "assign"), {"assignee": stranger.pk}, follow=True
    )

    assert "Select a valid choice" in response.content.decode()
    conversation.refresh_from_db()
    assert conversation.assignee is None


def test_forms_need_the_csrf_token(org, manager):
    conversation = customer_writes(org)
    client = Client(enforce_csrf_checks=True)
    client.force_login(manager)

    response = client.post(conversation_url(conversation, "status"), {"status": "resolved"})

    assert response.status_code == 403
    conversation.refresh_from_db()
    assert conversation.status == ConversationStatus.OPEN


def test_a_status_from_whatsapp_shows_as_ticks(org, manager):
    conversation = customer_writes(org)
    reply = create_chat(
        organization=org,
        contact=conversation.contact,
        type="outbound",
        status="sent",
        wam_id="wamid.REPLY",
        metadata={"type": "text", "text": {"body": "On its way"}},
    )
    deliver(org, webhook_body(delivered(reply.wam_id, "read")))

    assert Chat.objects.get(pk=reply.pk).status == ChatStatus.READ
    assert 'aria-label="read"' in page(logged_in(manager), conversation_url(conversation))


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", ["Send a template", "Internal note", "Resolve"]),
        ("es", ["Enviar una plantilla", "Nota interna", "Resolver"]),
        ("pt-BR", ["Enviar um modelo", "Nota interna", "Resolver"]),
    ],
)
def test_the_inbox_speaks_the_staff_members_language(org, manager, language, words):
    conversation = customer_writes(org)
    client = logged_in(manager)

    text = client.get(conversation_url(conversation), HTTP_ACCEPT_LANGUAGE=language).content
    listing = client.get(INBOX, HTTP_ACCEPT_LANGUAGE=language).content.decode()

    for word in words:
        assert word in text.decode()
    assert ("Bandeja de entrada" in listing) == (language == "es")
    assert ("Caixa de entrada" in listing) == (language == "pt-BR")


def test_an_uploaded_file_goes_to_the_cloud_api_then_out_by_its_id(org, manager, graph):
    conversation = customer_writes(org)
    photo = SimpleUploadedFile("parcel.png", PNG, content_type="image/png")

    response = logged_in(manager).post(
        conversation_url(conversation, "send"), {"message": "Your parcel", "attachment": photo}
    )

    assert response.status_code == 302
    upload, send = graph.requests[-2:]
    assert upload.path.endswith(f"/{PHONE_NUMBER_ID}/media")
    assert b'name="messaging_product"' in upload.body and PNG in upload.body
    media_id = str(10**15 + 1)
    assert send.json["type"] == "image"
    assert send.json["image"] == {"id": media_id, "caption": "Your parcel"}
    chat = Chat.objects.get(conversation=conversation, type="outbound")
    assert chat.metadata["image"]["id"] == media_id


def test_a_file_whatsapp_does_not_take_is_refused_before_the_cloud_api(org, manager, graph):
    conversation = customer_writes(org)
    calls = len(graph.requests)
    program = SimpleUploadedFile("setup.exe", b"MZ...", content_type="application/x-msdownload")

    response = logged_in(manager).post(
        conversation_url(conversation, "send"), {"attachment": program}, follow=True
    )

    assert "WhatsApp does not take application/x-msdownload files" in response.content.decode()
    assert len(graph.requests) == calls
    assert not Chat.objects.filter(conversation=conversation, type="outbound").exists()


def test_an_inbound_image_is_shown_to_whoever_may_see_the_conversation(org, manager, agent):
    conversation = customer_writes(org)
    media = ChatMedia.objects.create(
        organization=org,
        media_id="1234567890",
        kind="image",
        mime_type="image/png",
        state=MediaState.AVAILABLE,
        file=default_storage.save("media/photo.png", ContentFile(PNG)),
        size=len(PNG),
    )
    chat = create_chat(
        organization=org,
        contact=conversation.contact,
        type="inbound",
        status="received",
        media=media,
        metadata={"type": "image", "image": {"id": "1234567890", "caption": "Broken lid"}},
    )
    client = logged_in(agent)  # the chats' own pages are closed to agents

    text = page(client, conversation_url(conversation))

    url = f"/admin/inbox/{conversation.uuid}/media/{chat.uuid}"
    assert f'<img src="{url}"' in text
    assert "Broken lid" in text
    response = client.get(url)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == PNG
    assert response["Content-Type"] == "image/png"
    Conversation.objects.filter(pk=conversation.pk).update(assignee=manager)
    assert client.get(url).status_code == 404


def test_interactive_sends_show_what_they_offer_once(org, manager, api, graph):
    conversation = customer_writes(org)
    menu = {
        "type": "button",
        "body": {"text": "Pick one"},
        "action": {"buttons": [{"type": "reply", "reply": {"id": "a", "title": "Orders"}}]},
    }
    link = {
        "type": "cta_url",
        "body": {"text": "Our catalogue"},
        "action": {
            "name": "cta_url",
            "parameters": {"display_text": "Open it", "url": "https://example.com/c"},
        },
    }
    where = {
        "type": "location_request_message",
        "body": {"text": "Where should we deliver?"},
        "action": {"name": "send_location"},
    }
    for interactive in (menu, link, where):
        response = api.post(
            "/api/send/interactive",
            {"phone": f"+{CUSTOMER}", "interactive": interactive},
            format="json",
        )
        assert response.status_code == 200, response.json()
    client = logged_in(manager)

    text = page(client, conversation_url(conversation))
    assert text.count("<li>Orders</li>") == 1
    assert "<li>Open it</li>" in text
    assert "<li>Send location</li>" in text
    menu_chat, link_chat, where_chat = Chat.objects.filter(type="outbound").order_by("id")
    offers = ((menu_chat, "Orders"), (link_chat, "Open it"), (where_chat, "Send location"))
    for chat, offered in offers:
        chat_page = page(client, f"/admin/sending/chat/{chat.pk}/change/")
        assert chat_page.count(f"<li>{offered}</li>") == 1
