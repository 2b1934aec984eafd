"""A number only possible as a local number (`+12345678`: no area code) is refused
wherever a phone is taken: the rule is messaging_project/core/phones.py's, so the API,
the admin, campaigns and the contact import all apply it (). The
admin's form: tests/admin/test_contacts_admin.py."""

import phonenumbers
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from business_numbers.gateway import sandbox
from campaigns.recipients import fixed_recipients
from contacts.models import Contact
from messaging_project.core.phones import LOCAL_ONLY_PHONE, InvalidPhoneNumber, normalize_phone
from tests.factories import create_campaign_record

pytestmark = pytest.mark.django_db

LOCAL_ONLY = ["+12345678", "12345678", "+5255123456", "+1 234-5678"]


@pytest.mark.parametrize("written", LOCAL_ONLY)
def test_the_rule(written):
    number = phonenumbers.parse("+" + written.lstrip("+"), None)
    assert phonenumbers.is_possible_number_with_reason(number) == (
        phonenumbers.ValidationResult.IS_POSSIBLE_LOCAL_ONLY
    )
    with pytest.raises(InvalidPhoneNumber, match="only possible as a local number"):
        normalize_phone(written)


def test_a_full_number_still_passes():
    assert normalize_phone("+14155552671") == "14155552671"


def refused(response):
    assert response.status_code == 400
    assert response.json()["errors"]["phone"] == [LOCAL_ONLY_PHONE]


@pytest.mark.parametrize("written", LOCAL_ONLY[:2])
def test_the_api_refuses_it(api, written):
    sandbox.clear_outbox()
    refused(api.post("/api/contacts", {"first_name": "A", "phone": written}, format="json"))
    refused(api.post("/api/send", {"phone": written, "message": "Hi"}, format="json"))
    template = {"name": "order_update", "language": {"code": "en_US"}}
    refused(api.post("/api/send/template", {"phone": written, "template": template}, format="json"))
    media = {"phone": written, "media_type": "image", "media_url": "https://example.com/a.jpg"}
    refused(api.post("/api/send/media", media, format="json"))
    assert not Contact.objects.exists()
    assert sandbox.sent_messages() == []


def test_an_edit_refuses_it(api):
    uuid = api.post(
        "/api/contacts", {"first_name": "A", "phone": "+14155552671"}, format="json"
    ).json()["id"]
    refused(api.patch(f"/api/contacts/{uuid}", {"phone": "+12345678"}, format="json"))
    assert Contact.objects.get().phone == "14155552671"


def test_a_campaign_fails_that_recipient_and_sends_to_the_others(org_a):
    campaign = create_campaign_record(
        organization=org_a,
        name="Sale",
        template={"name": "order_update", "language": {"code": "en_US"}},
        phones=["+12345678", "+14155552671"],
        rate=10,
    )
    found = {r.phone: r for r in fixed_recipients(campaign)}
    assert found["+12345678"].status == "failed"
    assert found["+12345678"].error == LOCAL_ONLY_PHONE
    assert found["14155552671"].status != "failed"


def test_the_simulate_inbound_command_refuses_it(org_a):
    with pytest.raises(CommandError):
        call_command("simulate_inbound", str(org_a.uuid), "+12345678", "Hi")
