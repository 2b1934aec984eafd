"""Chats, templates and the answers of the sends have exactly the fields their OpenAPI
description documents (sending/api/schema.py), so a field added to a data function or
to the description alone fails here."""

import pytest
from django.utils import timezone

from business_numbers.api.schema import (
    MessageTemplateDetail,
    MessageTemplatePage,
    TemplateRecordSerializer,
)
from business_numbers.representations import template_data
from sending.api.schema import (
    ChatDetail,
    ChatDetailRecordSerializer,
    ChatPage,
    ChatRecordSerializer,
    SendResponseSerializer,
    SentChatRecordSerializer,
    TemplateChatRecordSerializer,
    TemplateSendResponseSerializer,
)
from sending.models import ChatStatusEvent
from sending.representations import chat_data, chat_record, chat_records
from tests.sending.factories import ChatFactory, MessageTemplateFactory
from tests.shapes import assert_documented

pytestmark = pytest.mark.django_db


@pytest.fixture
def failed_chat(org_a):
    chat = ChatFactory(
        organization=org_a,
        status="failed",
        error_code=131047,
        error_title="Re-engagement message",
        error_details={"details": "More than 24 hours have passed."},
    )
    now = timezone.now()
    for status, error_code in (("sent", None), ("failed", 131047)):
        ChatStatusEvent.objects.create(
            organization=org_a,
            chat=chat,
            wam_id=chat.wam_id,
            status=status,
            timestamp=now,
            error_code=error_code,
            error_title="Re-engagement message" if error_code else "",
        )
    return chat


def test_a_listed_chat_has_exactly_the_documented_fields(org_a, failed_chat):
    accepted = ChatFactory(organization=org_a)

    assert set(chat_record(accepted)) == set(ChatRecordSerializer().fields)
    # A failed chat says why, in a nested record of its own.
    assert_documented(chat_record(failed_chat), ChatRecordSerializer())


def test_records_made_together_are_each_chats_own_record(org_a, failed_chat):
    first = ChatFactory(organization=org_a)
    again = ChatFactory(organization=org_a, contact=first.contact)
    chats = [first, failed_chat, again]  # two contacts, one of them twice

    assert chat_records(chats) == [chat_record(chat) for chat in chats]
    assert chat_records([]) == []


def test_one_chat_with_its_statuses_has_exactly_the_documented_fields(api, failed_chat):
    body = api.get(f"/api/chats/{failed_chat.uuid}").json()

    assert set(body["data"]) == set(ChatDetailRecordSerializer().fields)
    assert len(body["data"]["statuses"]) == 2
    assert_documented(body, ChatDetail())


def test_the_chat_list_is_exactly_the_documented_page(api, failed_chat):
    assert_documented(api.get("/api/chats").json(), ChatPage())


def test_a_sends_chat_with_its_contact_has_exactly_the_documented_fields(org_a):
    chat = ChatFactory(organization=org_a)

    assert set(chat_data(chat)) == set(SentChatRecordSerializer().fields)
    assert_documented(chat_data(chat), SentChatRecordSerializer())


def test_a_template_sends_chat_without_contact_has_exactly_the_documented_fields(org_a):
    chat = ChatFactory(organization=org_a)

    assert set(chat_data(chat, with_contact=False)) == set(TemplateChatRecordSerializer().fields)


def test_a_templates_data_has_exactly_the_documented_fields(org_a):
    template = MessageTemplateFactory(organization=org_a)

    assert set(template_data(template)) == set(TemplateRecordSerializer().fields)


def test_the_template_list_and_one_template_are_exactly_as_documented(api, org_a):
    template = MessageTemplateFactory(organization=org_a)

    assert_documented(api.get("/api/templates").json(), MessageTemplatePage())
    assert_documented(api.get(f"/api/templates/{template.uuid}").json(), MessageTemplateDetail())


def test_a_sends_answer_is_exactly_as_documented(api, cloud_org, graph):
    response = api.post("/api/send", {"phone": "+4915123456789", "message": "Hello"}, format="json")

    assert response.status_code == 200, response.json()
    assert_documented(response.json(), SendResponseSerializer())


def test_a_template_sends_answer_is_exactly_as_documented(api, cloud_org, graph):
    template = {"name": "order_update", "language": {"code": "en_US"}}
    response = api.post(
        "/api/send/template", {"phone": "+4915123456789", "template": template}, format="json"
    )

    assert response.status_code == 200, response.json()
    assert_documented(response.json(), TemplateSendResponseSerializer())
