"""Template messages, the local copy of the business account's templates, and their sync."""

import json

import pytest
from django.core.management import CommandError, call_command

from business_numbers.models import MessageTemplate
from sending.models import Chat
from tests.channel import set_channel
from tests.sending.conftest import ACCESS_TOKEN, BUSINESS_ACCOUNT_ID
from tests.sending.factories import MessageTemplateFactory

PHONE = "+4915123456789"


def body_parameters(*texts: str) -> list[dict]:
    return [{"type": "body", "parameters": [{"type": "text", "text": t} for t in texts]}]


def send_template(api, template: dict):
    return api.post("/api/send/template", {"phone": PHONE, "template": template}, format="json")


def test_template_is_passed_to_the_cloud_api_as_given(api, cloud_org, graph):
    components = [
        {"type": "header", "parameters": [{"type": "text", "text": "A-17"}]},
        *body_parameters("Ada", "A-17"),
        {
            "type": "button",
            "sub_type": "url",
            "index": "1",
            "parameters": [{"type": "text", "text": "A-17"}],
        },
    ]

    response = send_template(
        api, {"name": "order_update", "language": {"code": "en_US"}, "components": components}
    )

    assert response.status_code == 200, response.json()
    assert graph.requests[0].json == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": "4915123456789",
        "type": "template",
        "template": {
            "name": "order_update",
            "language": {"code": "en_US"},
            "components": components,
        },
        "biz_opaque_callback_data": f"chat:{Chat.objects.get().uuid}",
    }


def test_template_response_has_the_documented_shape(api, org_a):
    response = send_template(api, {"name": "hello_world", "language": {"code": "en_US"}})

    assert response.status_code == 200
    data = response.json()["data"]["data"]
    assert data["contacts"] == [{"input": PHONE, "wa_id": "4915123456789"}]
    [message] = data["messages"]
    assert message["id"].startswith("wamid.")
    assert message["message_status"] == "accepted"
    chat = Chat.objects.get()
    assert list(data["chat"]) == [
        "id",
        "uuid",
        "organization_id",
        "wam_id",
        "contact_id",
        "type",
        "metadata",
        "media_id",
        "status",
        "source",
        "created_at",
        "sent_at",
        "media",
    ]
    assert data["chat"]["wam_id"] == message["id"] == chat.wam_id
    assert data["chat"]["status"] == "accepted"


def test_unknown_template_goes_through_and_keeps_what_was_sent(api, cloud_org, graph):
    template = {
        "name": "not_synced",
        "language": {"code": "de"},
        "components": body_parameters("Ada"),
    }

    response = send_template(api, template)

    assert response.status_code == 200
    metadata = json.loads(response.json()["data"]["data"]["chat"]["metadata"])
    assert metadata == {"type": "template", "template": template}


def test_known_template_chat_holds_the_rendered_text(api, org_a):
    MessageTemplateFactory(organization=org_a, name="order_update")

    response = send_template(
        api,
        {
            "name": "order_update",
            "language": {"code": "en_US"},
            "components": [
                {"type": "header", "parameters": [{"type": "text", "text": "A-17"}]},
                *body_parameters("Ada", "A-17"),
                {
                    "type": "button",
                    "sub_type": "url",
                    "index": "1",
                    "parameters": [{"type": "text", "text": "A-17"}],
                },
            ],
        },
    )

    assert response.status_code == 200, response.json()
    assert json.loads(response.json()["data"]["data"]["chat"]["metadata"]) == {
        "type": "text",
        "template": {"name": "order_update", "language": "en_US"},
        "text": {
            "header": "Order A-17",
            "body": "Hi Ada, your order A-17 has shipped.",
            "footer": "Reply STOP to opt out",
        },
        "buttons": [
            {"type": "QUICK_REPLY", "text": "Thanks", "value": None},
            {"type": "URL", "text": "Track", "value": "https://example.com/track/A-17"},
            {"type": "PHONE_NUMBER", "text": "Call us", "value": "+15550001111"},
        ],
    }


def test_named_parameters_are_filled_by_name(api, org_a):
    MessageTemplateFactory(
        organization=org_a,
        name="greeting",
        components=[{"type": "BODY", "text": "Hello {{first_name}}, code {{code}}."}],
    )
    components = [
        {
            "type": "body",
            "parameters": [
                {"type": "text", "parameter_name": "code", "text": "1234"},
                {"type": "text", "parameter_name": "first_name", "text": "Ada"},
            ],
        }
    ]

    response = send_template(
        api, {"name": "greeting", "language": {"code": "en_US"}, "components": components}
    )

    metadata = json.loads(response.json()["data"]["data"]["chat"]["metadata"])
    assert metadata["text"] == {"header": None, "body": "Hello Ada, code 1234.", "footer": None}
    assert metadata["buttons"] == []


@pytest.mark.parametrize("given", [[], ["Ada"], ["Ada", "A-17", "extra"]])
def test_wrong_number_of_body_parameters_is_a_400_that_sends_nothing(api, cloud_org, graph, given):
    MessageTemplateFactory(organization=cloud_org, name="order_update")

    response = send_template(
        api,
        {
            "name": "order_update",
            "language": {"code": "en_US"},
            "components": body_parameters(*given),
        },
    )

    assert response.status_code == 400
    assert response.json()["errors"] == {
        "template.components": [
            f"The template order_update (en_US) takes 2 body parameter(s); {len(given)} given."
        ]
    }
    assert graph.requests == []
    assert not Chat.objects.exists()


def test_another_organizations_template_is_not_used(api, cloud_org, org_b, graph):
    MessageTemplateFactory(organization=org_b, name="order_update")

    response = send_template(api, {"name": "order_update", "language": {"code": "en_US"}})

    assert response.status_code == 200  # unknown here: not checked, sent as given
    assert len(graph.requests) == 1


def test_template_refused_by_the_channel_is_a_422_and_a_failed_chat(api, cloud_org, graph):
    graph.reply(
        400,
        {
            "error": {
                "message": "(#132001) Template name does not exist in the translation",
                "type": "OAuthException",
                "code": 132001,
                "error_data": {"messaging_product": "whatsapp", "details": "template name (x)"},
                "fbtrace_id": "T1",
            }
        },
    )

    response = send_template(api, {"name": "x", "language": {"code": "en_US"}})

    assert response.status_code == 422
    assert response.json()["channel_error"]["code"] == 132001
    chat = Chat.objects.get()
    assert chat.status == "failed"
    assert chat.error_code == 132001


# The list.


def test_templates_list_is_the_organizations_own(api, org_a, org_b, django_assert_num_queries):
    mine = MessageTemplateFactory(organization=org_a, name="order_update")
    MessageTemplateFactory(organization=org_a, name="gone", deleted_at="2024-01-01T00:00:00Z")
    MessageTemplateFactory(organization=org_b)

    with django_assert_num_queries(2):  # token, page
        response = api.get("/api/templates")

    assert response.status_code == 200
    body = response.json()
    assert body["meta"]["total"] == 1
    [record] = body["data"]
    assert record["uuid"] == str(mine.uuid)
    assert record["name"] == "order_update"
    assert record["language"] == "en_US"
    assert record["status"] == "APPROVED"
    assert record["components"][1] == {
        "type": "BODY",
        "text": "Hi {{1}}, your order {{2}} has shipped.",
    }
    assert api.get(f"/api/templates/{mine.uuid}").json()["data"]["id"] == mine.id


# The sync.

PAGE_ONE = {
    "data": [
        {
            "name": "order_update",
            "components": [{"type": "BODY", "text": "Hi {{1}}, order {{2}} shipped."}],
            "language": "en_US",
            "status": "APPROVED",
            "category": "UTILITY",
            "id": "1001",
        },
        {
            "name": "order_update",
            "components": [{"type": "BODY", "text": "Hallo {{1}}, Bestellung {{2}}."}],
            "language": "de",
            "status": "PENDING",
            "category": "UTILITY",
            "id": "1002",
        },
    ],
    "paging": {"cursors": {"before": "MAZDZD", "after": "MQZDZD"}},
}
PAGE_TWO = {
    "data": [
        {
            "name": "spring_sale",
            "components": [{"type": "BODY", "text": "20% off this week!"}],
            "language": "en_US",
            "status": "APPROVED",
            "category": "MARKETING",
            "id": "1003",
        }
    ],
    "paging": {"cursors": {"before": "MgZDZD", "after": "MgZDZD"}},
}


def serve_two_pages(graph):
    first = dict(
        PAGE_ONE,
        paging={
            **PAGE_ONE["paging"],
            "next": f"{graph.url}/{BUSINESS_ACCOUNT_ID}/message_templates?after=MQZDZD&limit=100",
        },
    )
    graph.reply(200, first)
    graph.reply(200, PAGE_TWO)


def test_sync_follows_paging_and_copies_every_template(cloud_org, graph, capsys):
    serve_two_pages(graph)

    call_command("sync_templates", cloud_org.name)

    first, second = graph.requests
    assert first.method == second.method == "GET"
    assert first.path.startswith(f"/v21.0/{BUSINESS_ACCOUNT_ID}/message_templates?")
    assert first.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert second.path == f"/v21.0/{BUSINESS_ACCOUNT_ID}/message_templates?after=MQZDZD&limit=100"
    assert second.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    templates = {
        (t.name, t.language): t for t in MessageTemplate.objects.filter(organization=cloud_org)
    }
    assert set(templates) == {
        ("order_update", "en_US"),
        ("order_update", "de"),
        ("spring_sale", "en_US"),
    }
    assert templates[("order_update", "de")].status == "PENDING"
    assert templates[("spring_sale", "en_US")].category == "MARKETING"
    assert templates[("spring_sale", "en_US")].external_id == "1003"
    assert "3 new, 0 updated, 0 removed" in capsys.readouterr().out


def test_sync_updates_changed_and_removes_vanished_templates(cloud_org, org_b, graph):
    kept = MessageTemplateFactory(organization=cloud_org, name="order_update", status="PENDING")
    vanished = MessageTemplateFactory(organization=cloud_org, name="old_promo")
    other = MessageTemplateFactory(organization=org_b, name="old_promo")
    serve_two_pages(graph)

    call_command("sync_templates", cloud_org.uuid.hex)

    kept.refresh_from_db()
    vanished.refresh_from_db()
    other.refresh_from_db()
    assert kept.status == "APPROVED"
    assert kept.components == [{"type": "BODY", "text": "Hi {{1}}, order {{2}} shipped."}]
    assert vanished.deleted_at is not None
    assert other.deleted_at is None

    # It comes back if it reappears.
    graph.reply(200, {"data": [{"name": "old_promo", "language": "en_US", "status": "APPROVED"}]})
    call_command("sync_templates", cloud_org.name)
    vanished.refresh_from_db()
    assert vanished.deleted_at is None


def test_sync_keeps_the_quality_and_the_rejection_reason(cloud_org, graph):
    """Graph's template fields `quality_score` ({"score", "date"}) and `rejected_reason`
    ("NONE" unless rejected), as its message_templates edge lists them."""
    paused = MessageTemplateFactory(
        organization=cloud_org, name="paused_promo", status="PAUSED", reason="Low quality"
    )
    approved = MessageTemplateFactory(
        organization=cloud_org, name="back_again", status="PAUSED", reason="Low quality"
    )
    listed = [
        {
            "name": "paused_promo",
            "status": "PAUSED",
            "rejected_reason": "NONE",
            "quality_score": {"score": "RED", "date": 1700000000},
        },
        {
            "name": "back_again",
            "status": "APPROVED",
            "rejected_reason": "NONE",
            "quality_score": {"score": "GREEN", "date": 1700000000},
        },
        {"name": "bad_promo", "status": "REJECTED", "rejected_reason": "INVALID_FORMAT"},
    ]
    graph.reply(200, {"data": [dict(item, language="en_US") for item in listed]})

    call_command("sync_templates", cloud_org.name)

    assert "quality_score" in graph.requests[0].path and "rejected_reason" in graph.requests[0].path
    paused.refresh_from_db()
    approved.refresh_from_db()
    rejected = MessageTemplate.objects.get(name="bad_promo")
    assert (paused.status, paused.reason, paused.quality) == ("PAUSED", "Low quality", "RED")
    assert (approved.status, approved.reason, approved.quality) == ("APPROVED", "", "GREEN")
    assert (rejected.status, rejected.reason, rejected.quality) == (
        "REJECTED",
        "INVALID_FORMAT",
        "",
    )


def test_sync_refuses_a_next_page_on_another_host(cloud_org, graph):
    graph.reply(200, {"data": [], "paging": {"next": "https://evil.example/steal?after=x"}})

    with pytest.raises(CommandError, match="another host"):
        call_command("sync_templates", cloud_org.name)
    assert len(graph.requests) == 1


def test_sync_reports_a_refusal_and_changes_nothing(cloud_org, graph):
    MessageTemplateFactory(organization=cloud_org, name="order_update")
    graph.reply(
        401, {"error": {"message": "Invalid OAuth access token.", "code": 190, "fbtrace_id": "X"}}
    )

    with pytest.raises(CommandError, match="credentials need attention"):
        call_command("sync_templates", cloud_org.name)
    assert MessageTemplate.objects.live().count() == 1


def test_sync_needs_the_business_account_id(cloud_org, graph):
    set_channel(cloud_org, business_account_id="")

    with pytest.raises(CommandError, match="business account id"):
        call_command("sync_templates", cloud_org.name)
    assert graph.requests == []


def test_sync_of_an_unknown_organization_fails(db):
    with pytest.raises(CommandError, match="No organization"):
        call_command("sync_templates", "nobody")


def test_sandbox_sync_gives_the_hello_world_template(org_a):
    call_command("sync_templates", org_a.name)

    template = MessageTemplate.objects.get(organization=org_a)
    assert (template.name, template.language, template.status) == (
        "hello_world",
        "en_US",
        "APPROVED",
    )
