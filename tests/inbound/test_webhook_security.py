"""The subscription check and the signature: nothing unsigned gets in."""

import uuid

import pytest
from django.test import Client

from sending.models import Chat, ChatStatusEvent
from tests.channel import set_channel
from tests.inbound.conftest import (
    VERIFY_TOKEN,
    deliver,
    envelope,
    sign,
    status,
    statuses,
    text_message,
)
from tests.sending.factories import ChatFactory

pytestmark = pytest.mark.django_db


def verify(organization_uuid, **params):
    query = {
        "hub.mode": "subscribe",
        "hub.verify_token": VERIFY_TOKEN,
        "hub.challenge": "1158201444",
        **params,
    }
    return Client().get(f"/webhooks/whatsapp/{organization_uuid}", query)


class TestVerification:
    def test_right_token_echoes_the_challenge(self, webhook_org):
        response = verify(webhook_org.uuid)
        assert response.status_code == 200
        assert response.content == b"1158201444"
        assert response["Content-Type"].startswith("text/plain")

    def test_wrong_token_is_403(self, webhook_org):
        response = verify(webhook_org.uuid, **{"hub.verify_token": "guess"})
        assert response.status_code == 403
        assert response.json()["statusCode"] == 403

    def test_wrong_mode_is_403(self, webhook_org):
        assert verify(webhook_org.uuid, **{"hub.mode": "unsubscribe"}).status_code == 403

    def test_unknown_organization_is_404(self, webhook_org):
        response = verify(uuid.uuid4())
        assert response.status_code == 404
        assert response.json() == {"statusCode": 404, "message": "Not found."}

    def test_malformed_organization_uuid_is_json_404(self):
        response = Client().get("/webhooks/whatsapp/not-a-uuid")
        assert response.status_code == 404
        assert response.json()["statusCode"] == 404

    def test_no_verify_token_configured_never_verifies(self, org_a):
        assert verify(org_a.uuid, **{"hub.verify_token": ""}).status_code == 403


@pytest.fixture
def sent_chat(webhook_org):
    return ChatFactory(organization=webhook_org, wam_id="wamid.SENT1")


class TestSignature:
    payload = envelope(
        statuses(status("wamid.SENT1", "delivered", 1700000000)), text_message("hello")
    )

    def assert_nothing_changed(self, sent_chat):
        sent_chat.refresh_from_db()
        assert sent_chat.status == "accepted"
        assert ChatStatusEvent.objects.count() == 0
        assert Chat.objects.count() == 1

    def test_a_signed_delivery_is_processed(self, webhook_org, sent_chat):
        response = deliver(webhook_org, self.payload)
        assert response.status_code == 200
        assert response.json()["processed"] == {
            "statuses": 1,
            "messages": 1,
            "duplicates": 0,
            "skipped": 0,
        }
        sent_chat.refresh_from_db()
        assert sent_chat.status == "delivered"

    @pytest.mark.parametrize(
        "signature",
        ["", "sha256=", "sha256=zz", "md5=abc", "sha256=" + "0" * 64, "garbage"],
    )
    def test_missing_or_malformed_signature_is_401(self, webhook_org, sent_chat, signature):
        response = deliver(webhook_org, self.payload, signature=signature)
        assert response.status_code == 401
        assert response.json()["statusCode"] == 401
        self.assert_nothing_changed(sent_chat)

    def test_no_signature_header_is_401(self, webhook_org, sent_chat):
        assert deliver(webhook_org, self.payload, secret=None).status_code == 401
        self.assert_nothing_changed(sent_chat)

    def test_wrong_secret_is_401(self, webhook_org, sent_chat):
        assert deliver(webhook_org, self.payload, secret="another-secret").status_code == 401
        self.assert_nothing_changed(sent_chat)

    def test_body_altered_after_signing_is_401(self, webhook_org, sent_chat):
        import json

        body = json.dumps(self.payload).encode()
        signature = sign(body)
        altered = body.replace(b"delivered", b"read")
        assert deliver(webhook_org, altered, signature=signature).status_code == 401
        self.assert_nothing_changed(sent_chat)

    def test_organization_without_app_secret_refuses_everything(self, org_a):
        response = deliver(org_a, self.payload, secret="")
        assert response.status_code == 401

    def test_another_organizations_secret_does_not_work(self, webhook_org, org_b, sent_chat):
        set_channel(org_b, app_secret="b-secret")
        assert deliver(webhook_org, self.payload, secret="b-secret").status_code == 401
        self.assert_nothing_changed(sent_chat)


class TestBadBodies:
    @pytest.mark.parametrize("body", [b"{bad", b"[1, 2]", b'"text"', b"\xff\xfe"])
    def test_signed_but_not_a_json_object_is_400(self, webhook_org, body):
        response = deliver(webhook_org, body)
        assert response.status_code == 400
        assert response.json() == {"statusCode": 400, "message": "Malformed JSON body."}

    @pytest.mark.parametrize(
        "payload",
        [
            {},
            {"entry": "nope"},
            {"entry": [None, 1, "x", {"changes": None}, {"changes": [None, {"value": []}]}]},
            {
                "entry": [
                    {
                        "changes": [
                            {
                                "field": "messages",
                                "value": {"statuses": [{"id": None}], "messages": [{}]},
                            }
                        ]
                    }
                ]
            },
            envelope({"statuses": [{"id": "wamid.X", "status": "exploded", "timestamp": "1"}]}),
            envelope(
                {
                    "messages": [
                        {
                            "from": "not a phone",
                            "id": "wamid.Y",
                            "type": "text",
                            "text": {"body": "hi"},
                        }
                    ]
                }
            ),
            envelope(
                {
                    "messages": [
                        {"from": "14155552671", "id": "wamid.Z", "type": "text", "text": "flat"}
                    ]
                }
            ),
            envelope(
                {
                    "statuses": [
                        {"id": "wamid.T", "status": "read", "timestamp": "99999999999999999999"}
                    ]
                }
            ),
        ],
    )
    def test_unexpected_shapes_are_skipped_never_a_500(self, webhook_org, payload):
        response = deliver(webhook_org, payload)
        assert response.status_code == 200

    def test_a_bad_item_does_not_stop_the_good_ones(self, webhook_org):
        payload = envelope(
            {"messages": [{"from": "bad", "id": "wamid.B", "type": "text", "text": {"body": "x"}}]},
            text_message("hello", wam_id="wamid.GOOD"),
        )
        response = deliver(webhook_org, payload)
        assert response.json()["processed"]["messages"] == 1
        assert response.json()["processed"]["skipped"] == 1
        assert Chat.objects.filter(wam_id="wamid.GOOD").exists()

    def test_get_and_post_only(self, webhook_org):
        response = Client().put(f"/webhooks/whatsapp/{webhook_org.uuid}")
        assert response.status_code == 405
        assert response.json()["statusCode"] == 405
