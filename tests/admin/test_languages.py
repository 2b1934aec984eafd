"""The admin in the staff member's language, chosen by the browser's Accept-Language or
LANGUAGE_CODE; the API, its errors and the logs in English whatever either says."""

import logging

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.urls import reverse

from tests.conftest import client_for
from tests.factories import ContactFactory, create_campaign_record

pytestmark = pytest.mark.django_db

CONTACTS = reverse("admin:contacts_contact_changelist")
CAMPAIGNS = reverse("admin:campaigns_campaign_changelist")
ADD_CONTACT = reverse("admin:contacts_contact_add")


@pytest.mark.parametrize(
    ("accept_language", "content_language", "title"),
    [
        ("es", "es", "Seleccione contacto a modificar"),
        ("es-MX,es;q=0.9,en;q=0.5", "es", "Seleccione contacto a modificar"),
        ("pt-BR,pt;q=0.9", "pt-br", "Selecione contato para modificar"),
        ("pt", "pt-br", "Selecione contato para modificar"),
        ("en-GB", "en", "Select contact to change"),
        # A language without a complete catalog: the default, English.
        ("de-DE,de;q=0.9", "en", "Select contact to change"),
    ],
)
def test_the_admin_speaks_the_browsers_language(
    admin_a, records_a, accept_language, content_language, title
):
    response = admin_a.get(CONTACTS, HTTP_ACCEPT_LANGUAGE=accept_language)

    assert response.status_code == 200
    assert title in response.text
    assert response["Content-Language"] == content_language
    assert "Accept-Language" in response["Vary"]


def test_language_code_is_the_admins_language_when_the_browser_asks_for_none_of_ours(
    admin_a, records_a, settings
):
    settings.LANGUAGE_CODE = "pt-br"

    assert "Selecione contato para modificar" in admin_a.get(CONTACTS).text
    assert "Selecione contato" in admin_a.get(CONTACTS, HTTP_ACCEPT_LANGUAGE="de").text
    # The browser's own choice, when it is one of ours, comes first.
    assert "Seleccione contacto" in admin_a.get(CONTACTS, HTTP_ACCEPT_LANGUAGE="es").text


def test_the_login_page_is_translated_too(client):
    response = client.get(reverse("admin:login"), HTTP_ACCEPT_LANGUAGE="pt-BR")

    assert "Usuário:" in response.text
    assert "Senha:" in response.text
    assert "Acessar" in response.text


def test_the_campaign_list_in_portuguese(admin_a, org_a):
    create_campaign_record(
        organization=org_a,
        name="Promoção de primavera",
        template={"name": "spring_sale", "language": {"code": "pt_BR"}},
        phones=["+5511987654321"],
        rate=80,
    )

    page = admin_a.get(CAMPAIGNS, HTTP_ACCEPT_LANGUAGE="pt-BR").text

    assert "Selecione campanha para modificar" in page
    assert "Promoção de primavera" in page
    assert "agendada" in page  # its status
    for header in ("Progresso", "Enviados", "Entregues", "Lidos", "Com erro", "Ignorados"):
        assert header in page
    assert "Cancelar as campanhas selecionadas" in page


def test_an_action_reports_in_the_staff_members_language(admin_a, records_a):
    campaign = records_a["campaign"]

    response = admin_a.post(
        CAMPAIGNS,
        {"action": "cancel", ACTION_CHECKBOX_NAME: [campaign.pk]},
        HTTP_ACCEPT_LANGUAGE="es",
        follow=True,
    )

    assert "1 campaña cancelada." in response.text
    assert "cancelada" in response.text  # the new status, in the list


def test_a_services_refusal_is_shown_in_the_staff_members_language(admin_a, org_a):
    ContactFactory(organization=org_a, phone="4915123456789")
    form = {"first_name": "Greta", "phone": "+49 151 23456789"}

    response = admin_a.post(ADD_CONTACT, form, HTTP_ACCEPT_LANGUAGE="es")
    assert response.context["adminform"].form.errors["phone"] == [
        "Ya existe un contacto con este teléfono."
    ]

    response = admin_a.post(ADD_CONTACT, {**form, "phone": "12"}, HTTP_ACCEPT_LANGUAGE="pt-BR")
    assert response.context["adminform"].form.errors["phone"] == [
        "O telefone deve ser um número válido com o código do país."
    ]


def test_a_refusal_with_values_keeps_them_in_the_translation(admin_super):
    organization_page = reverse("admin:accounts_organization_add")
    form = {
        "name": "Acme",
        "rate_limit": "",
        "numbers-TOTAL_FORMS": "1",
        "numbers-INITIAL_FORMS": "0",
        "numbers-MIN_NUM_FORMS": "0",
        "numbers-MAX_NUM_FORMS": "1",
        "numbers-0-kind": "cloud_api",
        "numbers-0-phone_number_id": "12345",
        "numbers-0-access_token": "token",
        "numbers-0-app_secret": "two words",
    }

    response = admin_super.post(organization_page, form, HTTP_ACCEPT_LANGUAGE="es")

    assert response.status_code == 200
    assert "La clave secreta de la app debe ser una sola palabra sin espacios." in response.text


def test_the_api_answers_in_english_whatever_the_language(admin_a, org_a, settings):
    settings.LANGUAGE_CODE = "es"
    api = client_for(org_a)
    invalid = {"first_name": "A", "phone": "+14155552671", "email": "nope", "is_favorite": "x"}
    # The same thread served the admin in Spanish just before.
    assert "Seleccione" in admin_a.get(CONTACTS, HTTP_ACCEPT_LANGUAGE="es").text

    response = api.post("/api/contacts", invalid, format="json", HTTP_ACCEPT_LANGUAGE="es")

    assert response.json() == {
        "statusCode": 400,
        "message": "The given data was invalid.",
        "errors": {
            "email": ["Enter a valid email address."],
            "is_favorite": ["Must be a valid boolean."],
        },
    }
    assert "Content-Language" not in response
    assert "Accept-Language" not in response.get("Vary", "")
    taken = api.post("/api/contacts", {"first_name": "A", "phone": "+14155552671"}, format="json")
    assert taken.status_code == 200
    again = api.post(
        "/api/contacts",
        {"first_name": "B", "phone": "+14155552671"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="es",
    )
    assert again.json()["errors"]["phone"] == ["A contact with this phone already exists."]


def test_the_audit_log_names_the_action_in_english(admin_a, caplog):
    with caplog.at_level(logging.INFO, logger="messaging.admin"):
        admin_a.post(
            ADD_CONTACT,
            {"first_name": "Greta", "phone": "+49 151 23456789"},
            HTTP_ACCEPT_LANGUAGE="pt-BR",
        )

    [line] = [record.getMessage() for record in caplog.records if record.name == "messaging.admin"]
    assert line.startswith("Admin addition of contact 'Greta'")


def test_language_code_is_read_from_the_environment(monkeypatch):
    import importlib

    from django.core.exceptions import ImproperlyConfigured

    import messaging_project.settings as module

    monkeypatch.setenv("LANGUAGE_CODE", "pt-BR")
    assert importlib.reload(module).LANGUAGE_CODE == "pt-br"
    monkeypatch.setenv("LANGUAGE_CODE", "fr")
    with pytest.raises(ImproperlyConfigured, match="LANGUAGE_CODE must be one of en, es, pt-br"):
        importlib.reload(module)
    monkeypatch.delenv("LANGUAGE_CODE")
    assert importlib.reload(module).LANGUAGE_CODE == "en-us"
