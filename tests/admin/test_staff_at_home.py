"""Staff at home in the admin (docs/admin.md): a language switch in the header that is
remembered for the staff member, a chat shown as its message, the campaign form asking
for each template variable by name, the number's health read-only, no "View site"."""

import pytest
from django.contrib import admin
from django.test import RequestFactory
from django.urls import reverse

from accounts.models import AdminLanguage
from campaigns.models import Campaign
from contacts.models import Contact
from tests.admin.conftest import logged_in
from tests.factories import create_chat, create_template

pytestmark = pytest.mark.django_db

CONTACTS = reverse("admin:contacts_contact_changelist")
SWITCH = reverse("admin_language")
ADD_CAMPAIGN = reverse("admin:campaigns_campaign_add")


def as_request(user):
    request = RequestFactory().get(ADD_CAMPAIGN)
    request.user = user
    return request


# The language switch ---------------------------------------------------------------


def test_the_header_has_the_language_switch_and_no_view_site_link(admin_a):
    page = admin_a.get(reverse("admin:index")).text

    assert f'action="{SWITCH}"' in page
    assert '<option value="pt-br" lang="pt-br">Português (Brasil)</option>' in page
    assert "View site" not in page


def test_a_chosen_language_is_the_admins_whatever_the_browser_asks(admin_a, staff_a):
    response = admin_a.post(SWITCH, {"language": "es", "next": CONTACTS})

    assert response.status_code == 302 and response["Location"] == CONTACTS
    assert AdminLanguage.objects.get(user=staff_a).language == "es"
    page = admin_a.get(CONTACTS, HTTP_ACCEPT_LANGUAGE="pt-BR")
    assert "Seleccione contacto a modificar" in page.text
    assert page["Content-Language"] == "es"


def test_the_chosen_language_follows_the_staff_member_to_another_browser(admin_a, staff_a):
    admin_a.post(SWITCH, {"language": "pt-br", "next": CONTACTS})

    elsewhere = logged_in(staff_a)  # a new session, no language cookie
    page = elsewhere.get(CONTACTS, HTTP_ACCEPT_LANGUAGE="en")
    assert "Selecione contato para modificar" in page.text


def test_a_language_we_do_not_have_changes_nothing(admin_a, staff_a):
    response = admin_a.post(SWITCH, {"language": "de", "next": CONTACTS})

    assert response.status_code == 302
    assert not AdminLanguage.objects.exists()
    assert "Select contact to change" in admin_a.get(CONTACTS).text


def test_someone_not_logged_in_gets_the_cookie_and_nothing_is_stored(client):
    response = client.post(SWITCH, {"language": "es", "next": reverse("admin:login")})

    assert response.status_code == 302
    assert response.cookies["django_language"].value == "es"
    assert not AdminLanguage.objects.exists()
    assert "Nombre de usuario" in client.get(reverse("admin:login")).text


def test_the_switch_takes_only_a_post(admin_a):
    assert admin_a.get(SWITCH).status_code == 405


# A chat, as its message ----------------------------------------------------------------


def chat_page(admin, chat) -> str:
    response = admin.get(reverse("admin:sending_chat_change", args=[chat.pk]))
    assert response.status_code == 200
    return response.text


def message_part(page: str) -> str:
    """The page's readable message (the recorded JSON sits in a folded section after it)."""
    start = page.index('class="readable-message"')
    return page[start : page.index("</div>", start)]


@pytest.fixture
def contact(org_a):
    return Contact.objects.create(organization=org_a, phone="4915112345671", first_name="Ana")


def test_a_text_chat_reads_as_its_text(admin_a, org_a, contact):
    chat = create_chat(
        organization=org_a,
        contact=contact,
        type="inbound",
        metadata={"type": "text", "text": {"body": "Do you open\non Sundays?"}},
    )
    shown = message_part(chat_page(admin_a, chat))

    assert "Do you open<br>on Sundays?" in shown
    assert '"body"' not in shown


def test_a_template_chat_shows_its_name_and_each_variables_value(admin_a, org_a, contact):
    template = {
        "name": "order_update",
        "language": {"code": "en_US"},
        "components": [
            {"type": "body", "parameters": [{"type": "text", "text": "Ana"}]},
            {
                "type": "button",
                "sub_type": "url",
                "index": "1",
                "parameters": [{"type": "text", "text": "A-17"}],
            },
        ],
    }
    chat = create_chat(
        organization=org_a, contact=contact, metadata={"type": "template", "template": template}
    )
    shown = message_part(chat_page(admin_a, chat))

    assert "order_update (en_US)" in shown
    assert "<code>body {{1}}</code></td><td>Ana</td>" in shown
    assert "<code>button 1 {{1}}</code></td><td>A-17</td>" in shown


def test_a_rendered_template_reads_as_the_recipient_read_it(admin_a, org_a, contact):
    metadata = {
        "type": "text",
        "template": {"name": "order_update", "language": "en_US"},
        "text": {"header": "Order A-17", "body": "Hi Ana, it shipped.", "footer": "Thanks"},
        "buttons": [{"type": "URL", "text": "Track", "value": "https://example.com/t/A-17"}],
    }
    chat = create_chat(organization=org_a, contact=contact, metadata=metadata)
    shown = message_part(chat_page(admin_a, chat))

    for part in ("order_update (en_US)", "Order A-17", "Hi Ana, it shipped.", "Thanks", "Track"):
        assert part in shown


def test_a_tapped_choice_reads_as_the_choice(admin_a, org_a, contact):
    metadata = {
        "type": "interactive",
        "interactive": {"type": "button_reply", "button_reply": {"id": "yes", "title": "Yes"}},
        "text": {"body": "Yes"},
        "context": {"from": "15550001111", "id": "wamid.ASKED"},
    }
    chat = create_chat(organization=org_a, contact=contact, type="inbound", metadata=metadata)
    shown = message_part(chat_page(admin_a, chat))

    assert "Tapped" in shown and "Yes <code>yes</code>" in shown


def test_a_sent_image_shows_its_caption_and_link(admin_a, org_a, contact):
    metadata = {
        "type": "image",
        "image": {"link": "https://cdn.example.com/p.jpg", "caption": "Our new shop"},
    }
    chat = create_chat(organization=org_a, contact=contact, metadata=metadata)
    shown = message_part(chat_page(admin_a, chat))

    assert "Image" in shown and "Our new shop" in shown
    assert 'href="https://cdn.example.com/p.jpg"' in shown


def test_the_chat_page_reads_in_spanish(admin_a, org_a, contact):
    chat = create_chat(
        organization=org_a,
        contact=contact,
        type="inbound",
        metadata={"type": "button", "button": {"text": "Sí", "payload": "yes"}},
    )
    admin_a.post(SWITCH, {"language": "es", "next": CONTACTS})

    page = chat_page(admin_a, chat)
    assert "Pulsó" in message_part(page) and "Tal como se registró" in page


# The campaign form, variable by variable ----------------------------------------------


@pytest.fixture
def order_update(org_a):
    return create_template(
        organization=org_a,
        name="order_update",
        language="en_US",
        status="APPROVED",
        components=[
            {"type": "HEADER", "format": "TEXT", "text": "Order {{1}}"},
            {"type": "BODY", "text": "Hi {{first_name}}, order {{order}} has shipped."},
            {
                "type": "BUTTONS",
                "buttons": [{"type": "URL", "text": "Track", "url": "https://x.example/{{1}}"}],
            },
        ],
    )


def test_choosing_a_template_asks_for_each_of_its_variables_by_name(admin_a, order_update):
    page = admin_a.get(ADD_CAMPAIGN, {"message_template": order_update.pk}).text

    for name in ("header_1", "body_first_name", "body_order", "button_0_1"):
        assert f'name="variable_{name}"' in page
    assert "Body {{first_name}}" in page and "Header {{1}}" in page
    assert 'name="components"' not in page and "null" not in page


def test_the_campaign_sends_the_values_given_to_the_variables(admin_a, org_a, order_update):
    response = admin_a.post(
        ADD_CAMPAIGN,
        {
            "message_template": order_update.pk,
            "variable_header_1": "A-17",
            "variable_body_first_name": "Ana",
            "variable_body_order": "A-17",
            "variable_button_0_1": "a17",
            "name": "Shipped",
            "numbers": "+4915123456001",
        },
    )

    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Campaign.objects.get(name="Shipped").template == {
        "name": "order_update",
        "language": {"code": "en_US"},
        "components": [
            {"type": "header", "parameters": [{"type": "text", "text": "A-17"}]},
            {
                "type": "body",
                "parameters": [
                    {"type": "text", "parameter_name": "first_name", "text": "Ana"},
                    {"type": "text", "parameter_name": "order", "text": "A-17"},
                ],
            },
            {
                "type": "button",
                "parameters": [{"type": "text", "text": "a17"}],
                "sub_type": "url",
                "index": "0",
            },
        ],
    }


def test_a_variable_left_empty_is_asked_for_and_creates_nothing(admin_a, order_update):
    response = admin_a.post(
        ADD_CAMPAIGN,
        {"message_template": order_update.pk, "name": "Shipped", "numbers": "+4915123456001"},
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert set(errors) == {
        "variable_header_1",
        "variable_body_first_name",
        "variable_body_order",
        "variable_button_0_1",
    }
    assert not Campaign.objects.exists()


def test_another_organizations_template_gives_no_inputs(admin_a, org_b):
    theirs = create_template(
        organization=org_b,
        name="theirs",
        language="en_US",
        components=[{"type": "BODY", "text": "Hi {{1}}"}],
    )
    page = admin_a.get(ADD_CAMPAIGN, {"message_template": theirs.pk}).text

    assert "variable_body_1" not in page


def test_each_request_offers_its_own_organizations_templates(staff_a, staff_b, org_a, org_b):
    # Two staff members of different organizations on the add page at once (threads of
    # one web process): the form one request built keeps its organization's templates.
    mine = create_template(organization=org_a, name="mine", language="en_US")
    create_template(organization=org_b, name="theirs", language="en_US")
    campaigns = admin.site._registry[Campaign]

    form_a = campaigns.get_form(as_request(staff_a))
    campaigns.get_form(as_request(staff_b))

    assert list(form_a().fields["message_template"].queryset) == [mine]


def test_with_no_template_yet_the_form_says_where_to_get_one(admin_a):
    page = admin_a.get(ADD_CAMPAIGN).text

    assert "None yet" in page
    assert f'href="{reverse("admin:business_numbers_messagetemplate_changelist")}"' in page
    spanish = admin_a.get(ADD_CAMPAIGN, HTTP_ACCEPT_LANGUAGE="es").text
    assert "Ninguna todavía: sincronícelas desde WhatsApp" in spanish


def test_with_templates_the_form_says_nothing_of_getting_one(admin_a, order_update):
    assert "None yet" not in admin_a.get(ADD_CAMPAIGN).text


# The number's health -------------------------------------------------------------------


def test_staff_see_their_numbers_health_read_only(admin_a, org_a, records_a):
    number = records_a["number"]
    number.quality_rating = "YELLOW"
    number.messaging_limit = "TIER_1K"
    number.restrictions = [{"restriction_type": "RESTRICTED_ADD_PHONE_NUMBER_ACTION"}]
    number.alerts = [
        {
            "alert_severity": "WARNING",
            "alert_type": "OBA_APPROVED",
            "alert_status": "ACTIVE",
            "alert_description": "Quality is dropping",
        }
    ]
    number.save()
    url = reverse("admin:business_numbers_number_change", args=[number.pk])

    page = admin_a.get(url).text

    assert "The number&#x27;s health" in page or "The number's health" in page
    assert "RESTRICTED_ADD_PHONE_NUMBER_ACTION" in page
    assert "<strong>WARNING</strong> OBA_APPROVED (ACTIVE): Quality is dropping" in page
    assert "TIER_1K" in page and 'name="quality_rating"' not in page
    assert admin_a.post(url, {"quality_rating": "GREEN"}).status_code == 403
