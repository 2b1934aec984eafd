"""The screenshots of docs/admin.md: every admin page, in headless Chromium against the
live server, with fixed data (names, ids, dates), so that a picture changes only when
its page does. `make screenshots` writes them to docs/img/; otherwise the pages are
visited and checked, and no picture is written.

A staff member's pages first, then a superuser's, then the campaign list in Brazilian
Portuguese, as a browser set to Portuguese shows it (the language section).
"""

import datetime
import uuid

import pytest
from django.contrib.auth import get_user_model
from django_tasks_db.models import DBTaskResult

from accounts.models import ApiToken, Organization
from accounts.services import create_staff_user, issue_token
from business_numbers.models import MessageTemplate, Number, NumberKind
from campaigns.models import Campaign, CampaignStatus, Recipient, RecipientStatus
from canned_replies.models import CannedReply
from contacts.models import Contact, ContactGroup, OptOutWords
from events.models import Delivery, DeliveryStatus, Endpoint
from sending.models import AutoReply, AutoReplyState, Chat
from tests.admin import browsing
from tests.admin.browsing import BROWSER_TEST, screenshot, start_browser
from tests.admin.conftest import PASSWORD
from tests.admin.test_browser import contacts_for_the_picture
from tests.factories import (
    CannedReplyFactory,
    OrganizationFactory,
    create_campaign_record,
    create_chat,
    create_template,
)

pytestmark = BROWSER_TEST

DAY = datetime.datetime(2025, 3, 14, 9, 30, tzinfo=datetime.UTC)


def at(minutes: int) -> datetime.datetime:
    return DAY + datetime.timedelta(minutes=minutes)


def fixed_uuid(n: int) -> uuid.UUID:
    return uuid.UUID(int=0x5EED_0000_0000_4000_8000_0000_0000_0000 + n)


def canned_replies(organization) -> list[CannedReply]:
    replies = [
        ("Opening hours", "hours", "contains", "We are open Monday to Friday, 9:00 to 17:00."),
        ("Order status", "where is my order", "starts with", "Send us your order number."),
        ("Menu", "menu", "exact match", "https://example.com/menu.pdf"),
    ]
    made = []
    for name, trigger, criteria, text in replies:
        kind = "document" if text.startswith("https://") else "text"
        data = {"link": text} if kind == "document" else {"text": text}
        made.append(
            CannedReplyFactory(
                organization=organization,
                name=name,
                trigger=trigger,
                match_criteria=criteria,
                metadata={"type": kind, "data": data},
            )
        )
    return made


def chats(organization, reply: CannedReply) -> None:
    contacts = list(Contact.objects.filter(organization=organization).order_by("id"))
    rows = [
        (contacts[0], "outbound", "read", {"type": "template", "template": "order_update"}),
        (contacts[1], "outbound", "delivered", {"type": "text", "text": "Your order shipped."}),
        (contacts[2], "inbound", "received", {"type": "text", "text": "What are your hours?"}),
        (contacts[2], "outbound", "sent", {"type": "text", "text": reply.response_text}),
        (contacts[3], "outbound", "failed", {"type": "text", "text": "Thanks for your visit!"}),
    ]
    for n, (contact, kind, status, metadata) in enumerate(rows):
        failed = status == "failed"
        create_chat(
            organization=organization,
            contact=contact,
            type=kind,
            status=status,
            metadata=metadata,
            wam_id=f"wamid.HBgLMTQxNTU1NTI2NzQVAgARGBI{n:04d}",
            error_code=131047 if failed else None,
            error_title="Re-engagement message" if failed else "",
        )
    inbound = Chat.objects.get(organization=organization, type="inbound")
    answer = Chat.objects.get(organization=organization, status="sent")
    AutoReply.objects.create(
        organization=organization,
        inbound=inbound,
        canned_reply=reply,
        message=reply.response_text,
        state=AutoReplyState.SENT,
        attempts=1,
        reply=answer,
    )
    Chat.objects.filter(organization=organization).update(created_at=at(5))
    AutoReply.objects.filter(organization=organization).update(created_at=at(6), updated_at=at(6))


def templates(organization) -> None:
    for name, language, category, status in [
        ("order_update", "en_US", "UTILITY", "APPROVED"),
        ("order_update", "pt_BR", "UTILITY", "APPROVED"),
        ("spring_sale", "es", "MARKETING", "APPROVED"),
        ("loyalty_points", "en_US", "MARKETING", "PENDING"),
    ]:
        create_template(
            organization=organization,
            name=name,
            language=language,
            category=category,
            status=status,
            components=[{"type": "BODY", "text": "Hello {{1}}, your order {{2}} is on its way."}],
        )
    MessageTemplate.objects.filter(organization=organization).update(updated_at=at(1))


def campaigns(organization) -> None:
    contact = Contact.objects.filter(organization=organization).first()
    plans = [
        ("Spring sale", CampaignStatus.COMPLETED, ["read"] * 3 + ["delivered", "failed", "skip"]),
        ("Weekly offers", CampaignStatus.RUNNING, ["read", "sent", "sending"] + ["pending"] * 3),
        ("Loyalty points", CampaignStatus.SCHEDULED, []),
    ]
    for n, (name, status, outcomes) in enumerate(plans):
        campaign = create_campaign_record(
            organization=organization,
            name=name,
            template={"name": "spring_sale", "language": {"code": "es"}},
            phones=["+34612345673"],
            rate=80,
            status=status,
        )
        for m, outcome in enumerate(outcomes):
            chat = None
            if outcome in ("read", "delivered", "sent", "failed"):
                chat = create_chat(
                    organization=organization,
                    contact=contact,
                    status=outcome,
                    wam_id=f"wamid.campaign.{n}.{m}",
                )
            recipient_status = {
                "skip": RecipientStatus.SKIPPED,
                "sending": RecipientStatus.SENDING,
                "pending": RecipientStatus.PENDING,
            }.get(outcome, RecipientStatus.SENT)
            Recipient.objects.create(
                campaign=campaign, phone=f"3461234{m:04d}", chat=chat, status=recipient_status
            )
        Campaign.objects.filter(pk=campaign.pk).update(
            created_at=at(60 * n),
            started_at=at(60 * n + 1) if status != CampaignStatus.SCHEDULED else None,
            finished_at=at(60 * n + 9) if status == CampaignStatus.COMPLETED else None,
            scheduled_at=at(60 * 24 * 7) if status == CampaignStatus.SCHEDULED else None,
        )
    Chat.objects.filter(wam_id__startswith="wamid.campaign.").update(created_at=at(2))


def event_webhooks(organization) -> None:
    shop = Endpoint.objects.create(
        organization=organization,
        url="https://shop.example.com/hooks/whatsapp",
        events=["message.received", "message.status.update"],
    )
    crm = Endpoint.objects.create(organization=organization, url="https://crm.example.com/events")
    shop.secret = "whsec_" + "c2VjcmV0IGZvciB0aGUgcGljdHVyZSBvbmx5"  # "secret for the picture only"
    shop.save(update_fields=["secret"])
    for n, (endpoint, event, status, code) in enumerate(
        [
            (shop, "message.received", DeliveryStatus.SUCCEEDED, 200),
            (shop, "message.status.update", DeliveryStatus.SUCCEEDED, 204),
            (crm, "contact.created", DeliveryStatus.FAILED, 503),
            (crm, "contact.updated", DeliveryStatus.PENDING, None),
        ]
    ):
        Delivery.objects.create(
            organization=organization,
            endpoint=endpoint,
            msg_id=f"msg_{fixed_uuid(n).hex}",
            event=event,
            body="{}",
            status=status,
            attempts=8 if status == DeliveryStatus.FAILED else 1,
            response_status=code,
            next_attempt_at=at(90) if status == DeliveryStatus.PENDING else None,
        )
    Endpoint.objects.filter(organization=organization).update(created_at=at(0), updated_at=at(0))
    Delivery.objects.filter(organization=organization).update(created_at=at(7), updated_at=at(7))


def tasks() -> None:
    for n, (path, status, traceback) in enumerate(
        [
            ("inbound.auto_replies.send_auto_reply", "SUCCESSFUL", ""),
            ("inbound.media.fetch_media", "SUCCESSFUL", ""),
            ("campaigns.tasks.send_campaign", "RUNNING", ""),
            (
                "inbound.media.fetch_media",
                "FAILED",
                "Traceback (most recent call last):\nGatewayError: media expired (131052)",
            ),
        ]
    ):
        DBTaskResult.objects.create(
            id=fixed_uuid(100 + n),
            task_path=path,
            args_kwargs={"args": [n + 1], "kwargs": {}},
            status=status,
            backend_name="default",
            run_after=at(n),
            worker_ids=["worker-1"],
            traceback=traceback,
            exception_class_path="business_numbers.gateway.GatewayError" if traceback else "",
        )
    for n, task in enumerate(DBTaskResult.objects.order_by("id")):
        DBTaskResult.objects.filter(pk=task.pk).update(
            enqueued_at=at(n),
            started_at=at(n),
            finished_at=None if task.status == "RUNNING" else at(n + 1),
        )


def organizations() -> Organization:
    """The staff member's organization on the Cloud API, and two more on the sandbox."""
    organization = OrganizationFactory(name="Lumen Coffee")
    Number.objects.create(
        organization=organization,
        kind=NumberKind.CLOUD_API,
        phone_number_id="106540352242922",
        business_account_id="102290129340398",
        access_token="EAAG-not-a-real-token",
    )
    OrganizationFactory(name="Nordlicht Books")
    OrganizationFactory(name="Tienda Sol", rate_limit=120)
    for n, other in enumerate(Organization.objects.order_by("id")):
        Organization.objects.filter(pk=other.pk).update(uuid=fixed_uuid(n), created_at=at(n))
    organization.refresh_from_db()
    return organization


def staff_and_tokens(organization):
    staff = create_staff_user(username="alice", organization=organization, password=PASSWORD)
    other = Organization.objects.get(name="Nordlicht Books")
    create_staff_user(username="jonas", organization=other, password=PASSWORD)
    for n, (owner, name) in enumerate(
        [(organization, "Shop backend"), (organization, "CRM sync"), (other, "Website")]
    ):
        issued = issue_token(organization=owner, name=name)
        ApiToken.objects.filter(pk=issued.record.pk).update(
            prefix=f"wbm_{fixed_uuid(n).hex[-8:]}", created_at=at(n), last_used_at=at(30 + n)
        )
    get_user_model().objects.update(last_login=DAY)
    return staff


@pytest.fixture
def pages_data(db):
    organization = organizations()
    staff_and_tokens(organization)
    contacts_for_the_picture(organization)
    ContactGroup.objects.update(created_at=DAY, updated_at=DAY)
    replies = canned_replies(organization)
    CannedReply.objects.update(created_at=DAY, updated_at=DAY)
    OptOutWords.objects.create(
        organization=organization, stop_words="unsubscribe\nbaja", start_words="subscribe\nalta"
    )
    chats(organization, replies[0])
    templates(organization)
    campaigns(organization)
    event_webhooks(organization)
    tasks()
    get_user_model().objects.create_superuser("root", "root@example.com", PASSWORD)
    return organization


def log_in(browser, live_server, username: str) -> None:
    browsing.log_in(browser, live_server, username)
    # The pictures are taken without the navigation sidebar, so the lists have room (the
    # browser remembers it for the following pages).
    browser.execute_script("localStorage.setItem('django.admin.navSidebarIsOpen', 'false')")


def visit(browser, live_server, path: str) -> str:
    from selenium.webdriver.common.by import By

    browser.get(f"{live_server.url}{path}")
    return browser.find_element(By.TAG_NAME, "body").text


# (picture, page, a text the page must show): a staff member's pages.
STAFF_PAGES = [
    ("admin-index.png", "/admin/", "Canned replies"),
    ("admin-contact-groups.png", "/admin/contacts/contactgroup/", "Suppliers"),
    ("admin-opt-out-words.png", "/admin/contacts/optoutwords/{opt_out}/change/", "unsubscribe"),
    ("admin-canned-replies.png", "/admin/canned_replies/cannedreply/", "Order status"),
    (
        "admin-test-a-message.png",
        "/admin/canned_replies/cannedreply/test-message/?message=What+are+your+hours%3F",
        "This reply would answer",
    ),
    ("admin-chats.png", "/admin/sending/chat/", "Re-engagement message"),
    ("admin-auto-replies.png", "/admin/sending/autoreply/", "Lucía Fernández"),
    ("admin-message-templates.png", "/admin/business_numbers/messagetemplate/", "loyalty_points"),
    ("admin-campaigns.png", "/admin/campaigns/campaign/", "Weekly offers"),
    ("admin-campaign.png", "/admin/campaigns/campaign/{campaign}/change/", "Spring sale"),
    ("admin-event-webhook-endpoints.png", "/admin/events/endpoint/", "crm.example.com"),
    (
        "admin-event-webhook-endpoint.png",
        "/admin/events/endpoint/{endpoint}/change/",
        "Message received",
    ),
    ("admin-deliveries.png", "/admin/events/delivery/", "Contact created"),
]
# A superuser's.
SUPERUSER_PAGES = [
    ("admin-organizations.png", "/admin/accounts/organization/", "Tienda Sol"),
    ("admin-organization.png", "/admin/accounts/organization/{organization}/change/", "Meta"),
    ("admin-api-tokens.png", "/admin/accounts/apitoken/", "Shop backend"),
    ("admin-memberships.png", "/admin/accounts/membership/", "jonas"),
    ("admin-add-staff-member.png", "/admin/accounts/membership/add/", "Password again"),
    ("admin-tasks.png", "/admin/django_tasks_database/dbtaskresult/", "fetch_media"),
]


def test_every_admin_page_has_its_picture(pages_data, live_server):
    ids = {
        "opt_out": OptOutWords.objects.get().pk,
        "campaign": Campaign.objects.get(name="Spring sale").pk,
        "organization": pages_data.pk,
        "endpoint": Endpoint.objects.get(url__startswith="https://shop.").pk,
    }
    for username, pages in (("alice", STAFF_PAGES), ("root", SUPERUSER_PAGES)):
        browser = start_browser("en-US")
        try:
            log_in(browser, live_server, username)
            get_user_model().objects.update(last_login=DAY)  # as every picture shows it
            for picture, path, shown in pages:
                text = visit(browser, live_server, path.format(**ids))
                assert shown in text, f"{path}: {shown!r} not on the page"
                assert "Nordlicht" not in text or username == "root"
                screenshot(browser, picture)
        finally:
            browser.quit()


def test_the_campaign_list_in_portuguese_in_a_real_browser(pages_data, live_server):
    """A browser whose user prefers Brazilian Portuguese: the page, Django's words and
    ours, is in Portuguese."""
    browser = start_browser("pt-BR")
    try:
        log_in(browser, live_server, "alice")
        text = visit(browser, live_server, "/admin/campaigns/campaign/")
        assert browser.find_element("tag name", "html").get_attribute("lang") == "pt-br"
        for words in (
            "Selecione campanha para modificar",  # Django's
            "Campanhas",
            "Spring sale",
            "concluída",
            "em andamento",
            "agendada",
            "ENVIADOS",  # column headers are shown in capitals
            "ENTREGUES",
            "COM ERRO",
            "Bem-vindo(a), alice",
        ):
            assert words.lower() in text.lower(), f"{words!r} not on the page"
        for english in ("Select campaign", "completed", "running", "scheduled", "Delivered"):
            assert english not in text
        screenshot(browser, "admin-campaigns-pt-br.png")
    finally:
        browser.quit()
