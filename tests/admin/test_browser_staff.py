"""In a real browser (headless Chromium, Selenium, the live server): a staff member
switches the admin to Spanish from the header and finds it so after logging in again, reads
a chat as its message, and creates a campaign by filling in the template's variables by
name. Skipped only where Debian's chromium and chromium-driver are not installed."""

import pytest

from campaigns.models import Campaign
from contacts.models import Contact
from tests.admin.browsing import BROWSER_TEST, log_in, start_browser
from tests.factories import create_chat, create_template

pytestmark = BROWSER_TEST


@pytest.fixture
def browser():
    driver = start_browser("en-US")
    yield driver
    driver.quit()


def body_text(browser) -> str:
    from selenium.webdriver.common.by import By

    return browser.find_element(By.TAG_NAME, "body").text


def test_the_header_switches_the_language_and_it_is_remembered(browser, live_server, staff_a):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    log_in(browser, live_server)
    browser.get(f"{live_server.url}/admin/contacts/contact/")
    assert "Select contact to change" in body_text(browser)

    Select(browser.find_element(By.ID, "language-switch")).select_by_value("es")
    browser.find_element(By.CSS_SELECTOR, "#language-form button").click()

    # Back on the same page, in Spanish, though the browser asks for English. The old
    # page's body may go stale between finding it and reading it: look again.
    WebDriverWait(browser, 10, ignored_exceptions=[StaleElementReferenceException]).until(
        lambda d: "Seleccione contacto a modificar" in body_text(d)
    )
    assert browser.current_url.endswith("/admin/contacts/contact/")

    # Another visit: logged out, the cookie gone, logged in again.
    browser.find_element(By.CSS_SELECTOR, "#logout-form button").click()
    WebDriverWait(browser, 10).until(lambda d: not d.find_elements(By.ID, "logout-form"))
    browser.delete_all_cookies()
    log_in(browser, live_server)
    browser.get(f"{live_server.url}/admin/contacts/contact/")
    assert "Seleccione contacto a modificar" in body_text(browser)
    assert (
        Select(browser.find_element(By.ID, "language-switch")).first_selected_option.text
        == "Español"
    )


def test_a_chat_reads_as_its_message(browser, live_server, staff_a, org_a):
    contact = Contact.objects.create(organization=org_a, phone="4915112345671", first_name="Ana")
    template = {
        "name": "order_update",
        "language": {"code": "en_US"},
        "components": [{"type": "body", "parameters": [{"type": "text", "text": "Ana"}]}],
    }
    chat = create_chat(
        organization=org_a, contact=contact, metadata={"type": "template", "template": template}
    )

    log_in(browser, live_server)
    browser.get(f"{live_server.url}/admin/sending/chat/{chat.pk}/change/")
    text = body_text(browser)

    assert "Template: order_update (en_US)" in text
    assert "body {{1}} Ana" in text
    assert '"parameters"' not in text  # the recorded JSON stays folded


def test_a_campaign_asks_for_each_template_variable_by_name(browser, live_server, staff_a, org_a):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    template = create_template(
        organization=org_a,
        name="order_update",
        language="en_US",
        status="APPROVED",
        components=[{"type": "BODY", "text": "Hi {{first_name}}, order {{order}} shipped."}],
    )
    log_in(browser, live_server)
    browser.get(f"{live_server.url}/admin/campaigns/campaign/add/")
    assert not browser.find_elements(By.NAME, "variable_body_first_name")

    # Choosing the template brings its inputs (the form's script reloads the page).
    Select(browser.find_element(By.NAME, "message_template")).select_by_value(str(template.pk))
    WebDriverWait(browser, 10).until(
        seen.presence_of_element_located((By.NAME, "variable_body_first_name"))
    )
    assert "Body {{first_name}}" in body_text(browser)
    browser.find_element(By.NAME, "variable_body_first_name").send_keys("Ana")
    browser.find_element(By.NAME, "variable_body_order").send_keys("A-17")
    browser.find_element(By.NAME, "name").send_keys("Shipped")
    browser.find_element(By.NAME, "numbers").send_keys("+4915123456001")
    browser.find_element(By.NAME, "_save").click()
    WebDriverWait(browser, 10).until(seen.url_contains("/change/"))

    campaign = Campaign.objects.get(name="Shipped")
    assert campaign.template["components"] == [
        {
            "type": "body",
            "parameters": [
                {"type": "text", "parameter_name": "first_name", "text": "Ana"},
                {"type": "text", "parameter_name": "order", "text": "A-17"},
            ],
        }
    ]
