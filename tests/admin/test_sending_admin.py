"""Chats and message templates in the admin: read-only, and templates synced from WhatsApp."""

import pytest
from django.urls import reverse

from business_numbers.models import MessageTemplate

pytestmark = pytest.mark.django_db

SYNC = reverse("admin:business_numbers_messagetemplate_sync")


def test_a_chat_shows_its_status_and_error_read_only(admin_a, records_a):
    chat = records_a["chat"]
    url = reverse("admin:sending_chat_change", args=[chat.pk])
    page = admin_a.get(url)
    assert page.status_code == 200
    assert "131047" in page.text
    assert "Alpha re-engagement message" in page.text
    assert admin_a.post(url, {"status": "read"}).status_code == 403
    chat.refresh_from_db()
    assert chat.status == "failed"


def test_chats_and_templates_cannot_be_added_or_deleted(admin_a, records_a):
    for app, model in (("sending", "chat"), ("business_numbers", "messagetemplate")):
        assert admin_a.get(reverse(f"admin:{app}_{model}_add")).status_code == 403
        delete = reverse(f"admin:{app}_{model}_delete", args=[records_a[model].pk])
        assert admin_a.post(delete, {"post": "yes"}).status_code == 403


def test_sync_from_whatsapp_fills_only_own_organizations_templates(admin_a, org_a, org_b):
    listing = admin_a.get(reverse("admin:business_numbers_messagetemplate_changelist"))
    assert "Sync from WhatsApp" in listing.text
    response = admin_a.post(SYNC, follow=True)
    assert response.status_code == 200
    assert MessageTemplate.objects.live().filter(organization=org_a).exists()
    assert not MessageTemplate.objects.filter(organization=org_b).exists()
    assert any("added" in str(m) for m in response.context["messages"])


def test_sync_needs_a_post(admin_a):
    assert admin_a.get(SYNC).status_code == 405


def test_superusers_sync_with_the_organization_action(admin_super, org_b):
    from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME

    admin_super.post(
        reverse("admin:accounts_organization_changelist"),
        {"action": "sync_templates", ACTION_CHECKBOX_NAME: [org_b.pk]},
    )
    assert MessageTemplate.objects.live().filter(organization=org_b).exists()
