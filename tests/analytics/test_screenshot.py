"""The dashboard's picture for docs/analytics.md, in headless Chromium against the live
server, from fixed figures written into the rollup (`make screenshots` writes it)."""

import datetime

import pytest

from accounts.services import create_staff_user
from analytics.models import DailyBillable, DailyMessages, FirstResponse
from business_numbers.models import Number
from campaigns.models import Campaign, Recipient, RecipientStatus
from sending.models import Chat, ChatStatus
from tests.admin.browsing import BROWSER_TEST, screenshot, start_browser
from tests.admin.conftest import PASSWORD
from tests.admin.test_screenshots import log_in, visit
from tests.factories import ContactFactory, OrganizationFactory
from tests.sending.factories import ChatFactory

pytestmark = BROWSER_TEST

DAY = datetime.date(2025, 3, 14)
WEEK = [DAY - datetime.timedelta(days=n) for n in range(6, -1, -1)]


@pytest.fixture
def week(fast_passwords):
    organization = OrganizationFactory(name="Acme Shop")
    number = Number.objects.default_for(organization)
    for n, day in enumerate(WEEK):
        outbound = 400 + 60 * (n % 3) + 25 * n
        DailyMessages.objects.create(
            organization=organization,
            number=number,
            day=day,
            outbound=outbound,
            sent=outbound - 8,
            delivered=outbound - 20,
            read=outbound * 6 // 10,
            failed=8,
            inbound=120 + 15 * n,
        )
        for category, share in (("marketing", 7), ("utility", 2), ("authentication", 1)):
            DailyBillable.objects.create(
                organization=organization,
                number=number,
                day=day,
                category=category,
                messages=outbound * share // 10,
            )
    campaign = Campaign.objects.create(
        organization=organization,
        name="Spring sale",
        number=number,
        template={"name": "spring_sale", "language": {"code": "en"}},
        rate=80,
    )
    Campaign.objects.filter(pk=campaign.pk).update(
        created_at=datetime.datetime(2025, 3, 10, 9, tzinfo=datetime.UTC)
    )
    reached = [ChatStatus.READ] * 6 + [ChatStatus.DELIVERED] * 3 + [ChatStatus.FAILED]
    for n, state in enumerate(reached):
        contact = ContactFactory(organization=organization, phone=f"4915112000{n:02d}")
        chat = ChatFactory(organization=organization, contact=contact, status=state)
        if n < 3:
            ChatFactory(organization=organization, contact=contact, type="inbound")
        Recipient.objects.create(
            campaign=campaign,
            phone=contact.phone,
            contact=contact,
            chat=chat,
            status=RecipientStatus.FAILED if state == ChatStatus.FAILED else RecipientStatus.SENT,
        )
    alice = create_staff_user(username="alice", organization=organization, password=PASSWORD)
    ada = create_staff_user(username="ada", organization=organization, password=PASSWORD)
    conversation = Chat.objects.filter(organization=organization).first().conversation
    for staff, seconds in ((alice, 95), (alice, 140), (ada, 310), (ada, 250)):
        FirstResponse.objects.create(
            organization=organization,
            staff=staff,
            conversation=conversation,
            answered_at=datetime.datetime(2025, 3, 12, 10, tzinfo=datetime.UTC),
            seconds=seconds,
        )
    return organization


def test_the_dashboard_has_its_picture(week, live_server):
    browser = start_browser("en-US")
    try:
        browser.set_window_size(1280, 1500)
        log_in(browser, live_server, "alice")
        text = visit(browser, live_server, "/admin/analytics/?from=2025-03-08&to=2025-03-14")
        for shown in ("Messages per day by status", "Spring sale", "Download as CSV"):
            assert shown in text
        screenshot(browser, "admin-analytics.png")
    finally:
        browser.quit()
