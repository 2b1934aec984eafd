"""The conversations API (docs/inbox.md): the list and its filters, detail, PATCH, the
messages (listed and sent, through the loopback Cloud API), notes and read; another
organization's conversation is a 404 everywhere."""

import json

import pytest
from django.db.models import F
from django.utils import timezone

from accounts.services import create_staff_user
from events.models import Emission
from inbox.api.schema import ConversationRecordSerializer, NoteRecordSerializer
from inbox.models import Note
from sending.models import Chat, ChatMedia, Conversation
from sending.representations import chat_record
from tests.factories import ContactFactory, OrganizationFactory, create_chat
from tests.inbox.conftest import CUSTOMER, conversation_of, writes

pytestmark = pytest.mark.django_db

OTHER = "4915199999999"


def url(conversation, rest: str = "") -> str:
    return f"/api/conversations/{conversation.uuid}{rest}"


def listed(api, **params) -> list[str]:
    response = api.get("/api/conversations", params)
    assert response.status_code == 200, response.content
    return [item["contact"]["phone"] for item in response.json()["data"]]


def emitted() -> list[dict]:
    return [json.loads(emission.body) for emission in Emission.objects.order_by("id")]


@pytest.fixture
def talking(inbox_org):
    """Two customers wrote: Ada (CUSTOMER) last."""
    writes(inbox_org, "first", sender=OTHER)
    writes(inbox_org, "second")
    return conversation_of(inbox_org)


# The list ----------------------------------------------------------------------------


def test_the_list_is_a_laravel_page_newest_message_first(api, talking):
    response = api.get("/api/conversations")

    body = response.json()
    assert response.status_code == 200
    assert [c["contact"]["phone"] for c in body["data"]] == [CUSTOMER, OTHER]
    assert body["meta"]["total"] == 2 and body["meta"]["current_page"] == 1
    assert set(body["links"]) == {"first", "last", "prev", "next"}
    record = body["data"][0]
    assert set(record) == set(ConversationRecordSerializer().fields)
    assert record["uuid"] == str(talking.uuid)
    assert record["number"] == str(talking.number.uuid)
    assert record["status"] == "open" and record["unread"] == 1 and record["assignee"] is None
    assert record["labels"] == []
    assert record["window_expires_at"].endswith("Z")


def test_the_whole_list_is_the_token_and_one_query(api, talking, django_assert_num_queries):
    with django_assert_num_queries(2):  # token, the page with the kept total
        body = api.get("/api/conversations", {"per_page": 1}).json()

    assert body["meta"]["total"] == 2 and len(body["data"]) == 1


def test_filters(api, inbox_org, talking, manager):
    other = conversation_of(inbox_org, OTHER)
    api.patch(url(talking), {"assignee": "mia", "labels": ["VIP"]}, format="json")
    api.patch(url(other), {"status": "resolved"}, format="json")
    api.post(url(other, "/read"))

    assert listed(api, status="resolved") == [OTHER]
    assert listed(api, status="open") == [CUSTOMER]
    assert listed(api, assignee="mia") == [CUSTOMER]
    assert listed(api, assignee="none") == [OTHER]
    assert listed(api, assignee="nobody-by-that-name") == []
    assert listed(api, unread="true") == [CUSTOMER]
    assert listed(api, unread="false") == [CUSTOMER, OTHER]
    assert listed(api, label="VIP") == [CUSTOMER]
    assert listed(api, label="vip-not") == []
    assert listed(api, search="5199999") == [OTHER]
    assert listed(api, search="+49 151 99") == [OTHER]


def test_search_by_name(api, inbox_org, talking):
    contact = talking.contact
    contact.first_name, contact.last_name = "Grace", "Hopper"
    contact.save()

    assert listed(api, search="grace") == [CUSTOMER]
    assert listed(api, search="Grace Hop") == [CUSTOMER]
    assert listed(api, search="Ada Lovelace") == []


def test_a_bad_filter_is_a_400(api, talking):
    response = api.get("/api/conversations", {"status": "closed"})

    assert response.status_code == 400
    assert "status" in response.json()["errors"]
    assert api.get("/api/conversations", {"unread": "maybe"}).status_code == 400


# Detail and PATCH ----------------------------------------------------------------------


def test_detail(api, talking):
    response = api.get(url(talking))

    assert response.status_code == 200
    assert response.json()["data"]["uuid"] == str(talking.uuid)


def test_patch_changes_only_what_is_sent_and_emits_conversation_updated(
    api, talking, manager, listening
):
    Emission.objects.all().delete()

    response = api.patch(
        url(talking),
        {"status": "pending", "assignee": "mia", "labels": [" VIP ", "vip", ""]},
        format="json",
    )

    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["status"] == "pending" and data["assignee"] == "mia" and data["labels"] == ["VIP"]
    [event] = emitted()
    assert event["type"] == "conversation.updated" and event["data"] == data

    response = api.patch(url(talking), {"labels": ["VIP"]}, format="json")  # no change
    assert response.json()["data"]["labels"] == ["VIP"]
    assert len(emitted()) == 1

    response = api.patch(url(talking), {"assignee": None}, format="json")
    assert response.json()["data"]["assignee"] is None
    assert response.json()["data"]["status"] == "pending"


@pytest.mark.parametrize("who", ["stranger", "other-organization", "not-staff", "inactive"])
def test_an_assignee_who_is_not_staff_of_the_organization_is_a_400(api, talking, who):
    from django.contrib.auth import get_user_model

    if who == "other-organization":
        create_staff_user(username=who, organization=OrganizationFactory(), password="x-Pass-1234")
    elif who == "not-staff":
        get_user_model().objects.create_user(who, password="x")
    elif who == "inactive":
        user = create_staff_user(
            username=who, organization=talking.organization, password="x-Pass-1234"
        )
        user.is_active = False
        user.save()

    response = api.patch(url(talking), {"assignee": who, "status": "resolved"}, format="json")

    assert response.status_code == 400
    assert response.json()["errors"] == {
        "assignee": ["The assignee must be a staff member of the organization."]
    }
    assert conversation_of(talking.organization).status == "open"  # nothing changed


@pytest.mark.parametrize(
    "body,field",
    [
        ({"status": "closed"}, "status"),
        ({"labels": "VIP"}, "labels"),
        ({"labels": [1]}, "labels.0"),
        ({"labels": ["x" * 51]}, "labels.0"),
        ({"labels": [f"l{n}" for n in range(21)]}, "labels"),
        ({"assignee": 7}, "assignee"),
    ],
)
def test_bad_changes_are_a_400(api, talking, body, field):
    response = api.patch(url(talking), body, format="json")

    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_put_is_not_allowed(api, talking):
    assert api.put(url(talking), {"status": "open"}, format="json").status_code == 405


# Messages ------------------------------------------------------------------------------


def test_messages_are_the_conversations_chats_newest_first(api, inbox_org, talking):
    writes(inbox_org, "third")

    response = api.get(url(talking, "/messages"), {"per_page": 1})

    body = response.json()
    assert response.status_code == 200
    assert body["meta"]["total"] == 2  # the other customer's chat is not in it
    [newest] = body["data"]
    assert json.loads(newest["metadata"])["text"]["body"] == "third"
    assert newest["number"] == str(talking.number.uuid)
    assert api.get(url(talking, "/messages"), {"page": 2, "per_page": 1}).json()["data"][0][
        "uuid"
    ] == str(Chat.objects.filter(conversation=talking).order_by("id").first().uuid)


def test_a_messages_page_is_the_chat_records_of_the_orm_in_two_queries(
    api, inbox_org, talking, django_assert_num_queries
):
    media = ChatMedia.objects.create(
        organization=inbox_org,
        media_id="m1",
        kind="image",
        mime_type="image/jpeg",
        state="available",
        size=1234,
    )
    for n in range(11):
        create_chat(
            organization=inbox_org,
            contact=talking.contact,
            wam_id=f"wamid.page.{n}",
            status="read",
            metadata={"type": "text", "text": {"body": f"m{n}"}},
            media=media if n == 10 else None,
        )
    deleted = create_chat(organization=inbox_org, contact=talking.contact, status="sent")
    # No endpoint deletes a chat; one deleted leaves the page and its conversation's count.
    Chat.objects.filter(pk=deleted.pk).update(deleted_at=timezone.now())
    Conversation.objects.filter(pk=talking.pk).update(messages=F("messages") - 1)
    orm = (
        Chat.objects.live()
        .filter(conversation=talking)
        .select_related("contact", "number", "media")
        .order_by("-id")
    )

    with django_assert_num_queries(3):  # token, the conversation with its count, the page
        body = api.get(url(talking, "/messages"), {"per_page": 5, "page": 2}).json()

    assert body["data"] == [chat_record(chat) for chat in orm[5:10]]
    assert body["meta"]["total"] == 12 and body["meta"]["last_page"] == 3  # not the deleted
    newest = api.get(url(talking, "/messages")).json()["data"][0]
    assert newest == chat_record(orm[0]) and newest["media"]["file_size"] == 1234


def test_a_messages_page_past_the_last_is_empty_without_reading_it(
    api, talking, django_assert_num_queries
):
    with django_assert_num_queries(2):  # token, the conversation with its count
        body = api.get(url(talking, "/messages"), {"page": 3}).json()

    assert body["data"] == [] and body["meta"]["total"] == 1 and body["meta"]["last_page"] == 1


def test_a_text_in_the_window_goes_to_the_contact_from_the_conversations_number(
    api, talking, graph
):
    response = api.post(url(talking, "/messages"), {"message": "How can I help?"}, format="json")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["statusCode"] == 200 and body["data"]["success"] is True
    chat = Chat.objects.get(uuid=body["data"]["data"]["chat"]["uuid"])
    assert chat.conversation_id == talking.pk and chat.number_id == talking.number_id
    assert chat.created_by == 0  # the API: no staff member
    [sent] = graph.requests
    payload = json.loads(sent.body)
    assert payload["to"] == CUSTOMER and payload["text"]["body"] == "How can I help?"
    assert talking.number.phone_number_id in sent.path
    after = conversation_of(talking.organization)
    assert after.unread == 1 and after.status == "open"  # sending changes neither


def test_a_reply_quotes_the_message(api, talking, graph):
    inbound = Chat.objects.filter(conversation=talking).get()

    response = api.post(
        url(talking, "/messages"),
        {"message": "Yes", "reply_to": str(inbound.uuid)},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert json.loads(graph.requests[0].body)["context"] == {"message_id": inbound.wam_id}


def test_free_text_while_the_window_is_closed_is_a_422_without_calling_whatsapp(
    api, inbox_org, graph
):
    writes(inbox_org, at=int(timezone.now().timestamp()) - 25 * 3600)
    talking = conversation_of(inbox_org)
    chats = Chat.objects.count()

    for body in (
        {"message": "Hello?"},
        {"media_type": "image", "media_url": "https://example.com/a.png"},
    ):
        response = api.post(url(talking, "/messages"), body, format="json")

        assert response.status_code == 422, response.content
        assert response.json()["channel_error"]["code"] == 131047
    assert graph.requests == []
    assert Chat.objects.count() == chats


def test_a_template_goes_while_the_window_is_closed(api, inbox_org, graph):
    writes(inbox_org, at=int(timezone.now().timestamp()) - 25 * 3600)
    talking = conversation_of(inbox_org)

    response = api.post(
        url(talking, "/messages"),
        {"template": {"name": "hello_world", "language": {"code": "en_US"}}},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert "contact" in response.json()["data"]["data"]["chat"]  # as /api/send answers
    assert json.loads(graph.requests[0].body)["template"]["name"] == "hello_world"


def test_media_in_the_window(api, talking, graph):
    response = api.post(
        url(talking, "/messages"),
        {"media_type": "image", "media_url": "https://example.com/a.png", "caption": "Here"},
        format="json",
    )

    assert response.status_code == 200, response.content
    payload = json.loads(graph.requests[0].body)
    assert payload["image"] == {"link": "https://example.com/a.png", "caption": "Here"}


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"message": "a", "template": {"name": "x", "language": {"code": "en"}}},
        {"message": "   "},
        {"media_type": "image"},
        {"media_type": "film", "media_url": "https://example.com/a.png"},
    ],
)
def test_a_bad_send_is_a_400_and_sends_nothing(api, talking, graph, body):
    response = api.post(url(talking, "/messages"), body, format="json")

    assert response.status_code == 400
    assert graph.requests == []


# Notes and read ------------------------------------------------------------------------


def test_notes_are_kept_and_never_sent(api, talking, graph):
    first = api.post(url(talking, "/notes"), {"body": "Called them back"}, format="json")
    api.post(url(talking, "/notes"), {"body": "  Wants a refund  "}, format="json")

    assert first.status_code == 200, first.content
    note = first.json()["data"]
    assert set(note) == set(NoteRecordSerializer().fields)
    assert note["author"] is None and note["body"] == "Called them back"
    listed_notes = api.get(url(talking, "/notes")).json()["data"]
    assert [n["body"] for n in listed_notes] == ["Wants a refund", "Called them back"]
    assert graph.requests == []
    assert Note.objects.count() == 2


def test_a_blank_note_is_a_400(api, talking):
    response = api.post(url(talking, "/notes"), {"body": "  "}, format="json")

    assert response.status_code == 400
    assert "body" in response.json()["errors"]


def test_read_sets_unread_to_zero(api, talking):
    response = api.post(url(talking, "/read"))

    assert response.status_code == 200
    assert response.json()["data"]["unread"] == 0
    assert Conversation.objects.get(pk=talking.pk).unread == 0


# Tenancy -------------------------------------------------------------------------------


def test_another_organizations_conversation_is_a_404_everywhere(api_b, talking, graph):
    calls = [
        ("get", ""),
        ("patch", ""),
        ("get", "/messages"),
        ("post", "/messages"),
        ("get", "/notes"),
        ("post", "/notes"),
        ("post", "/read"),
    ]
    body = {"status": "resolved", "message": "hi", "body": "note"}
    for method, rest in calls:
        response = getattr(api_b, method)(url(talking, rest), body, format="json")
        assert response.status_code == 404, (method, rest)
        assert response.json() == {"statusCode": 404, "message": "Not found."}
    assert api_b.get("/api/conversations").json()["data"] == []
    assert graph.requests == [] and Note.objects.count() == 0
    assert conversation_of(talking.organization).status == "open"


def test_an_unknown_uuid_is_a_404(api, talking):
    assert api.get("/api/conversations/not-a-uuid").status_code == 404
    assert api.get("/api/conversations/5b0e3c1f-0d6a-4a57-b1f3-f0a4c2d9e8b1").status_code == 404
    assert api.get("/api/conversations/not-a-uuid/messages").status_code == 404
    unknown = api.get("/api/conversations/5b0e3c1f-0d6a-4a57-b1f3-f0a4c2d9e8b1/messages")
    assert unknown.json() == {"statusCode": 404, "message": "Not found."}


def test_chats_made_before_the_inbox_belong_to_their_conversation(api, org_a):
    contact = ContactFactory(organization=org_a)
    create_chat(organization=org_a, contact=contact, wam_id="wamid.OLD", status="sent")

    [record] = api.get("/api/conversations").json()["data"]
    assert record["contact"]["uuid"] == str(contact.uuid)
