"""Every export writes text as text: each CSV the service gives, through the API or the
admin (the contacts, the analytics' messages, billable categories, campaigns and
agents), holds accented and non-Latin text as written, never as `\\u` escapes."""

import pytest
from django.utils import timezone

from accounts.services import create_staff_user
from tests.admin.conftest import PASSWORD, logged_in
from tests.factories import ContactFactory, ContactGroupFactory, create_campaign_record

pytestmark = pytest.mark.django_db

TEXT = "São Paulo — 東京"
TODAY = timezone.now().date().isoformat()
SPAN = f"from={TODAY}&to={TODAY}"

API_EXPORTS = [
    "/api/contacts/export",
    f"/api/analytics/messages?{SPAN}&format=csv",
    f"/api/analytics/agents?{SPAN}&format=csv",
]
ADMIN_EXPORTS = [
    "/admin/contacts/contact/export/",
    *(f"/admin/analytics/?{SPAN}&csv={chart}" for chart in ("messages", "billable", "campaigns")),
    f"/admin/analytics/?{SPAN}&csv=agents",
]


@pytest.fixture
def manager(org_a):
    """A staff member whose name is not ASCII, with a contact, a group and a campaign
    whose texts are not either."""
    member = create_staff_user(username="joão", organization=org_a, password=PASSWORD)
    ContactFactory(
        organization=org_a,
        phone="5511987654321",
        first_name="João",
        contact_group=ContactGroupFactory(organization=org_a, name=TEXT),
        address={"street": "Rua Augusta 1", "city": TEXT, "state": None, "zip": None,
                 "country": "Brasil"},
        metadata={"Notas": TEXT},
    )  # fmt: skip
    create_campaign_record(
        organization=org_a,
        name=TEXT,
        template={"name": "hello_world", "language": {"code": "en_US"}},
        phones=["+5511987654321"],
        rate=80,
    )
    return member


def content(response) -> bytes:
    assert response.status_code == 200, response.status_code
    assert response["Content-Type"].startswith("text/csv")
    if response.streaming:
        return b"".join(response.streaming_content)
    return response.content


@pytest.mark.parametrize("url", API_EXPORTS)
def test_the_apis_exports_write_text_as_text(api, manager, url):
    exported = content(api.get(url))

    assert b"\\u" not in exported
    if "contacts" in url:
        assert TEXT.encode() in exported and "João".encode() in exported
    if "agents" in url:
        assert "joão".encode() in exported


@pytest.mark.parametrize("url", ADMIN_EXPORTS)
def test_the_admins_exports_write_text_as_text(manager, url):
    exported = content(logged_in(manager).get(url))

    assert b"\\u" not in exported
    if "contacts" in url:
        assert TEXT.encode() in exported and "João".encode() in exported
    if "campaigns" in url:
        assert TEXT.encode() in exported
    if "agents" in url:
        assert "joão".encode() in exported
