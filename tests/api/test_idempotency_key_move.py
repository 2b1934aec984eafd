"""The idempotency keys moved from accounts to the base app: an upgrade keeps every key.

The test migrates the test database back to before the move (accounts 0004), stores a
key there with the old model, migrates forward again and retries the request.
"""

import json

import pytest
from django.contrib.contenttypes.models import ContentType
from django.test import RequestFactory
from rest_framework.request import Request

from accounts.models import Organization
from contacts.models import Contact
from messaging_project.api.idempotency import fingerprint
from messaging_project.api.models import IdempotencyKey
from tests.conftest import client_for
from tests.databases import migrate

BEFORE_THE_MOVE = [("accounts", "0004_idempotency_keys")]
CONTACT = json.dumps({"first_name": "Ada", "phone": "+14155552671"})
STORED = {"data": {"first_name": "Ada", "phone": "14155552671"}}


def fingerprint_of_contact_post() -> str:
    django_request = RequestFactory().post("/api/contacts", CONTACT, "application/json")
    return fingerprint(Request(django_request))


@pytest.mark.migrates
@pytest.mark.django_db(transaction=True)
def test_a_key_stored_before_the_move_replays_its_response_after_it():
    content_type = ContentType.objects.get_for_model(IdempotencyKey)
    executor = migrate(BEFORE_THE_MOVE)
    try:
        old = executor.loader.project_state(BEFORE_THE_MOVE).apps
        organization = old.get_model("accounts", "Organization").objects.create(name="Before")
        old.get_model("accounts", "IdempotencyKey").objects.create(
            organization=organization,
            key="key-1",
            fingerprint=fingerprint_of_contact_post(),
            completed=True,
            response_status=200,
            response_body=STORED,
        )
        assert ContentType.objects.filter(app_label="accounts", model="idempotencykey").exists()
    finally:
        migrate(None)

    stored = IdempotencyKey.objects.get()
    assert (stored.organization_id, stored.key, stored.response_body) == (
        organization.pk,
        "key-1",
        STORED,
    )
    # The model's content type (and the permissions on it) moved with it.
    ContentType.objects.clear_cache()
    assert ContentType.objects.get_for_model(IdempotencyKey).pk == content_type.pk

    api = client_for(Organization.objects.get(pk=organization.pk))
    retry = api.post(
        "/api/contacts", CONTACT, content_type="application/json", HTTP_IDEMPOTENCY_KEY="key-1"
    )
    assert retry.status_code == 200
    assert retry.json() == STORED
    assert retry["Idempotent-Replayed"] == "true"
    assert not Contact.objects.exists()
