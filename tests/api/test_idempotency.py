"""Idempotency-Key: a blind retry never creates or sends twice."""

import json
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from business_numbers.gateway import sandbox
from contacts.models import Contact
from devtools.cloud_api_server import graph_error
from messaging_project.api.models import IdempotencyKey
from sending.models import Chat

CONTACT = {"first_name": "Ada", "phone": "+14155552671"}
SEND = {"phone": "+14155552671", "message": "Your order has shipped"}


@pytest.fixture(autouse=True)
def empty_outbox():
    sandbox.clear_outbox()


def post(client, path, payload, key):
    return client.post(
        path, json.dumps(payload), content_type="application/json", HTTP_IDEMPOTENCY_KEY=key
    )


@pytest.mark.django_db
class TestCreates:
    def test_a_retry_replays_the_first_response_and_creates_nothing(self, api):
        first = post(api, "/api/contacts", CONTACT, "key-1")
        second = post(api, "/api/contacts", CONTACT, "key-1")
        assert first.status_code == second.status_code == 200
        assert second.json() == first.json()
        assert second["Idempotent-Replayed"] == "true"
        assert "Idempotent-Replayed" not in first
        assert Contact.objects.count() == 1

    def test_the_same_key_with_another_body_is_422(self, api):
        post(api, "/api/contacts", CONTACT, "key-1")
        response = post(api, "/api/contacts", {**CONTACT, "first_name": "Grace"}, "key-1")
        assert response.status_code == 422
        assert (
            response.json()["message"]
            == "This Idempotency-Key was already used with a different request."
        )
        assert Contact.objects.get().first_name == "Ada"

    def test_the_same_key_on_another_endpoint_is_422(self, api):
        post(api, "/api/contact-groups", {"name": "VIP"}, "key-1")
        assert post(api, "/api/canned-replies", {"name": "VIP"}, "key-1").status_code == 422

    def test_a_validation_failure_stores_nothing(self, api):
        bad = post(api, "/api/contacts", {"phone": "nope"}, "key-1")
        assert bad.status_code == 400
        assert not IdempotencyKey.objects.exists()
        assert post(api, "/api/contacts", CONTACT, "key-1").status_code == 200

    def test_keys_belong_to_one_organization(self, api, api_b):
        post(api, "/api/contacts", CONTACT, "shared")
        response = post(api_b, "/api/contacts", CONTACT, "shared")
        assert response.status_code == 200 and "Idempotent-Replayed" not in response
        assert Contact.objects.count() == 2

    def test_a_request_still_running_is_409(self, api, org_a):
        body = json.dumps(CONTACT).encode()
        from hashlib import sha256

        digest = sha256()
        for part in (b"POST", b"/api/contacts", body):
            digest.update(part)
            digest.update(b"\0")
        IdempotencyKey.objects.create(
            organization=org_a, key="busy", fingerprint=digest.hexdigest()
        )
        response = post(api, "/api/contacts", CONTACT, "busy")
        assert response.status_code == 409
        assert not Contact.objects.exists()

    def test_keys_expire_after_24_hours(self, api):
        post(api, "/api/contacts", CONTACT, "old")
        IdempotencyKey.objects.update(created_at=timezone.now() - timedelta(hours=25))
        Contact.objects.update(deleted_at=timezone.now())  # so the phone is free again
        response = post(api, "/api/contacts", CONTACT, "old")
        assert response.status_code == 200 and "Idempotent-Replayed" not in response
        assert Contact.objects.count() == 2

    @pytest.mark.parametrize("key", ["", "x" * 256, "naïve", "tab\there"])
    def test_a_malformed_key_is_400(self, api, key):
        response = api.post(
            "/api/contacts",
            CONTACT,
            format="json",
            HTTP_IDEMPOTENCY_KEY=key.encode().decode("latin-1"),
        )
        assert response.status_code == 400
        assert "Idempotency-Key" in response.json()["errors"]
        assert not Contact.objects.exists()

    def test_without_a_key_nothing_changes(self, api):
        assert api.post("/api/contacts", CONTACT, format="json").status_code == 200
        assert (
            api.post("/api/contacts", CONTACT, format="json").status_code == 400
        )  # duplicate phone
        assert not IdempotencyKey.objects.exists()


@pytest.mark.django_db
class TestSends:
    def test_a_retried_send_reaches_whatsapp_once(self, api):
        first = post(api, "/api/send", SEND, "send-1")
        second = post(api, "/api/send", SEND, "send-1")
        assert second.json() == first.json() and second["Idempotent-Replayed"] == "true"
        assert len(sandbox.sent_messages()) == 1
        assert Chat.objects.count() == 1

    def test_a_template_send_too(self, api):
        template = {
            "phone": "+14155552671",
            "template": {"name": "hello_world", "language": {"code": "en_US"}},
        }
        post(api, "/api/send/template", template, "tpl-1")
        post(api, "/api/send/template", template, "tpl-1")
        assert len(sandbox.sent_messages()) == 1

    def test_a_refused_send_is_kept_so_a_retry_does_not_try_again(self, cloud_org, graph, api):
        graph.reply(400, graph_error(131047, "Re-engagement message"))
        first = post(api, "/api/send", SEND, "send-2")
        second = post(api, "/api/send", SEND, "send-2")
        assert first.status_code == second.status_code == 422
        assert second.json() == first.json()
        assert len(graph.requests) == 1
        assert Chat.objects.get().status == "failed"


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs concurrent connections")
def test_two_concurrent_retries_send_once(cloud_org, graph, api):
    success = {"messaging_product": "whatsapp", "contacts": [], "messages": [{"id": "wamid.ONCE"}]}
    graph.reply(200, success, delay=1.0)
    barrier = threading.Barrier(2)
    statuses = []

    def retry():
        from django.db import connections

        barrier.wait()
        try:
            statuses.append(post(api, "/api/send", SEND, "race").status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=retry) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200, 409]
    assert len(graph.requests) == 1
    assert Chat.objects.count() == 1
    assert post(api, "/api/send", SEND, "race")["Idempotent-Replayed"] == "true"
