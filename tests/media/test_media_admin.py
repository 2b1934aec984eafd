"""Staff see an inbound chat's media on the chat's admin page and open it; staff of
another organization cannot."""

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse

from sending.models import ChatMedia
from tests.admin.conftest import logged_in
from tests.sending.factories import ChatFactory

pytestmark = pytest.mark.django_db


def chat_with_media(organization, *, state="available", kind="image"):
    name = default_storage.save(f"media/{organization.uuid}/photo.png", ContentFile(b"\x89PNG"))
    media = ChatMedia.objects.create(
        organization=organization,
        media_id="1",
        kind=kind,
        mime_type="image/png",
        state=state,
        file=name if state == "available" else "",
        size=4,
        last_error="" if state == "available" else "credentials: rejected",
    )
    return ChatFactory(organization=organization, type="inbound", status="received", media=media)


def test_the_chat_page_links_to_the_media_which_opens(admin_a, org_a):
    chat = chat_with_media(org_a)
    page = admin_a.get(reverse("admin:sending_chat_change", args=[chat.pk]))
    link = reverse("admin:sending_chat_media", args=[chat.pk])
    assert link in page.text
    assert "Open the image (image/png, 4 bytes)" in page.text

    response = admin_a.get(link)
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content) == b"\x89PNG"


def test_a_failed_fetch_shows_why(admin_a, org_a):
    chat = chat_with_media(org_a, state="failed")
    page = admin_a.get(reverse("admin:sending_chat_change", args=[chat.pk]))
    assert "image, failed (attempts: 0): credentials: rejected" in page.text
    assert admin_a.get(reverse("admin:sending_chat_media", args=[chat.pk])).status_code == 404


def test_staff_of_another_organization_cannot_open_it(staff_b, org_a):
    chat = chat_with_media(org_a)
    other = logged_in(staff_b)
    assert other.get(reverse("admin:sending_chat_media", args=[chat.pk])).status_code == 404
