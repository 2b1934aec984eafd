"""End to end in a real browser: headless Chromium, driven by Selenium, against the
live server. A staff member logs in, creates a canned reply through the form, finds
it in the list, and sees nothing of the other organization.

With `make screenshots` it also takes two of the pictures docs/admin.md shows. It is
skipped only where Debian's chromium and chromium-driver are not installed; .ci/run
installs them.
"""

import datetime

import pytest

from accounts.services import create_staff_user
from canned_replies.models import CannedReply
from contacts.models import Contact
from tests.admin.browsing import BROWSER_TEST, screenshot, start_browser
from tests.admin.conftest import PASSWORD, make_records
from tests.factories import ContactFactory, ContactGroupFactory

pytestmark = BROWSER_TEST


@pytest.fixture
def browser():
    driver = start_browser("en-US")
    yield driver
    driver.quit()


def contacts_for_the_picture(organization) -> None:
    """A few plausible contacts, with fixed dates so the screenshot does not change."""
    customers = ContactGroupFactory(organization=organization, name="Customers")
    suppliers = ContactGroupFactory(organization=organization, name="Suppliers")
    people = [
        ("Amira", "Haddad", "4915112345671", customers, True),
        ("Jonas", "Becker", "4917623456782", customers, False),
        ("Lucía", "Fernández", "34612345673", suppliers, False),
        ("Wei", "Chen", "14155552674", None, True),
    ]
    for first, last, phone, group, favourite in people:
        ContactFactory(
            organization=organization,
            first_name=first,
            last_name=last,
            phone=phone,
            email=f"{first.lower()}.{last.lower()}@example.com".replace("í", "i"),
            contact_group=group,
            is_favorite=favourite,
        )
    fixed = datetime.datetime(2025, 3, 14, 9, 30, tzinfo=datetime.UTC)
    Contact.objects.filter(organization=organization).update(updated_at=fixed)


def test_staff_member_manages_canned_replies_in_a_real_browser(browser, live_server, org_a, org_b):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    create_staff_user(username="alice", organization=org_a, password=PASSWORD)
    contacts_for_the_picture(org_a)
    make_records(org_b, "Bravo")
    wait = WebDriverWait(browser, 10)

    def page(path: str) -> str:
        browser.get(f"{live_server.url}{path}")
        return browser.find_element(By.TAG_NAME, "body").text

    # Log in.
    page("/admin/login/")
    browser.find_element(By.NAME, "username").send_keys("alice")
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    wait.until(seen.presence_of_element_located((By.ID, "logout-form")))
    assert "WhatsApp Business Messaging" in browser.find_element(By.ID, "site-name").text

    # The admin is styled: the stylesheet was served and applied.
    header = browser.find_element(By.ID, "header")
    assert header.value_of_css_property("display") == "flex"

    # The contacts list: A's contacts, nothing of B's. The pictures are taken without
    # the navigation sidebar, so the list has room.
    text = page("/admin/contacts/contact/")
    browser.find_element(By.ID, "toggle-nav-sidebar").click()
    assert "Amira Haddad" in text
    assert "Bravo" not in text
    screenshot(browser, "admin-contacts.png")

    # A canned reply, through the form.
    page("/admin/canned_replies/cannedreply/add/")
    browser.find_element(By.NAME, "name").send_keys("Opening hours")
    browser.find_element(By.NAME, "trigger").send_keys("opening hours")
    Select(browser.find_element(By.NAME, "match_criteria")).select_by_value("contains")
    browser.find_element(By.NAME, "response").send_keys(
        "We are open Monday to Friday, 9:00 to 17:00."
    )
    screenshot(browser, "admin-canned-reply-form.png")
    browser.find_element(By.NAME, "_save").click()
    wait.until(seen.presence_of_element_located((By.ID, "result_list")))

    text = browser.find_element(By.TAG_NAME, "body").text
    assert "Opening hours" in text
    assert "Bravo" not in text
    reply = CannedReply.objects.get(name="Opening hours")
    assert reply.organization == org_a
    assert reply.response_text == "We are open Monday to Friday, 9:00 to 17:00."

    # B's reply by a crafted URL: not found.
    theirs = CannedReply.objects.get(organization=org_b)
    text = page(f"/admin/canned_replies/cannedreply/{theirs.pk}/change/")
    assert "Not Found" in text
    assert "Bravo" not in text
