"""The admin in the staff member's language, chosen by the browser's Accept-Language or
LANGUAGE_CODE; the API, its errors and the logs in English whatever either says."""

import logging

import pytest
from django.urls import reverse

from tests.conftest import client_for

pytestmark = pytest.mark.django_db

CONTACTS = reverse("admin:contacts_contact_changelist")
ADD_CONTACT = reverse("admin:contacts_contact_add")


def test_the_login_page_is_translated(client):
    response = client.get(reverse("admin:login"), HTTP_ACCEPT_LANGUAGE="pt-BR")

    assert response["Content-Language"] == "pt-br"
    assert "Accept-Language" in response["Vary"]
    assert "Usuário:" in response.text
    assert "Senha:" in response.text
    assert "Acessar" in response.text


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
