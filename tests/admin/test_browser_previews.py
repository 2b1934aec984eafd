"""In a real browser (headless Chromium, Selenium, the live server): the WhatsApp-like
previews beside the canned-reply form and the template writer are drawn again as the
staff member types, in their language. Skipped only where Debian's chromium and
chromium-driver are not installed."""

import json

import pytest

from tests.admin.browsing import BROWSER_TEST, log_in, start_browser

pytestmark = BROWSER_TEST


@pytest.fixture
def browser():
    driver = start_browser("es")
    yield driver
    driver.quit()


def preview(browser) -> str:
    from selenium.webdriver.common.by import By

    return browser.find_element(By.ID, "whatsapp-preview").text


def type_into(browser, name: str, text: str) -> None:
    from selenium.webdriver.common.by import By

    field = browser.find_element(By.ID, f"id_{name}")
    field.clear()
    field.send_keys(text)


def test_a_menus_preview_follows_its_json(browser, live_server, staff_a):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select

    log_in(browser, live_server)
    browser.get(f"{live_server.url}/admin/canned_replies/cannedreply/add/")
    Select(browser.find_element(By.ID, "id_response_type")).select_by_value("interactive")
    type_into(browser, "response", '{"type": "button"')
    assert "Todavía no es un objeto interactivo válido (JSON)." in preview(browser)

    menu = {
        "type": "button",
        "header": {"type": "text", "text": "Pedidos"},
        "body": {"text": "Hola {first_name}, ¿qué necesitas?"},
        "footer": {"text": "Acme"},
        "action": {
            "buttons": [
                {"type": "reply", "reply": {"id": "track", "title": "Seguir pedido"}},
                {"type": "reply", "reply": {"id": "agent", "title": "Hablar con alguien"}},
            ]
        },
    }
    type_into(browser, "response", json.dumps(menu))
    assert preview(browser).splitlines() == [
        "Pedidos",
        "Hola {first_name}, ¿qué necesitas?",
        "Acme",
        "Seguir pedido",
        "Hablar con alguien",
    ]
    type_into(browser, "response", json.dumps({**menu, "type": "location_request_message"}))
    assert "📍 Enviar ubicación" in preview(browser)


def test_the_template_writers_preview_fills_the_examples_as_they_are_typed(
    browser, live_server, staff_a
):
    log_in(browser, live_server)
    browser.get(f"{live_server.url}/admin/business_numbers/messagetemplate/write/")
    type_into(browser, "body", "Hola {{1}}, tu pedido {{2}} está listo.")
    assert "Hola {{1}}, tu pedido {{2}} está listo." in preview(browser)
    type_into(browser, "body_examples", "Ana\n1234")
    type_into(browser, "footer", "Acme")
    type_into(browser, "quick_replies", "Gracias")
    assert preview(browser).splitlines() == [
        "Hola Ana, tu pedido 1234 está listo.",
        "Acme",
        "Gracias",
    ]
