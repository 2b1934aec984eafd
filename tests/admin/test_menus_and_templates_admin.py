"""Menus and templates in the admin: an interactive canned reply checked with WhatsApp's
limits (the place named on the response), the preview beside both forms, and a template
written through the same service as POST /api/templates."""

import json

import pytest
from django.urls import reverse

from accounts.models import Membership, Role
from business_numbers.models import MessageTemplate, Number
from canned_replies.models import CannedReply

pytestmark = pytest.mark.django_db

ADD_REPLY = reverse("admin:canned_replies_cannedreply_add")
WRITE = reverse("admin:business_numbers_messagetemplate_write")
TEMPLATES = reverse("admin:business_numbers_messagetemplate_changelist")


def menu(title: str) -> str:
    return json.dumps(
        {
            "type": "button",
            "body": {"text": "Pick one"},
            "action": {"buttons": [{"type": "reply", "reply": {"id": "a", "title": title}}]},
        }
    )


def reply_form(**changes) -> dict:
    return {
        "name": "Menu",
        "trigger": "menu",
        "match_criteria": "exact match",
        "response_type": "interactive",
        "response": menu("Orders"),
        **changes,
    }


def test_an_interactive_reply_and_a_button_reply_are_saved(admin_a, org_a):
    assert admin_a.post(ADD_REPLY, reply_form()).status_code == 302
    assert (
        admin_a.post(ADD_REPLY, reply_form(trigger="a", match_criteria="button")).status_code == 302
    )
    first, second = CannedReply.objects.order_by("id")
    assert first.metadata == {
        "type": "interactive",
        "data": {"interactive": json.loads(menu("Orders"))},
    }
    assert second.match_criteria == "button"


def test_a_broken_limit_is_named_on_the_response(admin_a):
    response = admin_a.post(ADD_REPLY, reply_form(response=menu("t" * 21)))
    errors = response.context["adminform"].form.errors["response"]
    assert any(error.startswith("action.buttons.0.reply.title:") for error in errors), errors
    assert not CannedReply.objects.exists()


def test_the_reply_form_has_its_preview(admin_a):
    page = admin_a.get(ADD_REPLY).text
    assert "data-whatsapp-preview" in page
    assert "core/whatsapp_preview.js" in page


def template_form(number: Number, **changes) -> dict:
    return {
        "number": number.pk,
        "name": "order_ready",
        "language": "en_US",
        "category": "UTILITY",
        "header": "Order {{1}}",
        "header_example": "1234",
        "body": "Hello {{1}}, your order {{2}} is ready.",
        "body_examples": "Ada\n1234",
        "footer": "Acme Shop",
        "quick_replies": "Thanks\nHelp",
        "url_button_text": "",
        "url_button_url": "",
        **changes,
    }


def test_a_manager_writes_a_template_with_a_preview(admin_a, org_a):
    number = Number.objects.default_for(org_a)
    page = admin_a.get(WRITE)
    assert page.status_code == 200 and "data-whatsapp-preview" in page.text
    assert WRITE in admin_a.get(TEMPLATES).text
    response = admin_a.post(WRITE, template_form(number))
    assert response.status_code == 302, response.context["form"].errors
    template = MessageTemplate.objects.get()
    assert (template.status, template.number) == ("APPROVED", number)  # the sandbox
    assert template.components == [
        {
            "type": "HEADER",
            "format": "TEXT",
            "text": "Order {{1}}",
            "example": {"header_text": ["1234"]},
        },
        {
            "type": "BODY",
            "text": "Hello {{1}}, your order {{2}} is ready.",
            "example": {"body_text": [["Ada", "1234"]]},
        },
        {"type": "FOOTER", "text": "Acme Shop"},
        {
            "type": "BUTTONS",
            "buttons": [
                {"type": "QUICK_REPLY", "text": "Thanks"},
                {"type": "QUICK_REPLY", "text": "Help"},
            ],
        },
    ]


def test_a_broken_rule_is_shown_on_its_field(admin_a, org_a):
    number = Number.objects.default_for(org_a)
    response = admin_a.post(WRITE, template_form(number, body_examples="Ada"))
    assert "body_examples" in response.context["form"].errors
    response = admin_a.post(WRITE, template_form(number, name="Order Ready"))
    assert "name" in response.context["form"].errors
    assert not MessageTemplate.objects.exists()


def test_another_organizations_number_is_not_offered(admin_a, org_b):
    other = Number.objects.default_for(org_b)
    response = admin_a.post(WRITE, template_form(other))
    assert "number" in response.context["form"].errors


def test_an_agent_may_not_write_templates(admin_a, staff_a):
    Membership.objects.filter(user=staff_a).update(role=Role.AGENT)
    assert admin_a.get(WRITE).status_code == 403


@pytest.mark.parametrize(
    "language, words",
    [
        ("es", ["Escribir una plantilla", "Vista previa", "Enviar a WhatsApp"]),
        ("pt-br", ["Escrever um modelo", "Pré-visualização", "Enviar ao WhatsApp"]),
    ],
)
def test_the_template_writer_speaks_the_staff_members_language(admin_a, language, words):
    page = admin_a.get(WRITE, HTTP_ACCEPT_LANGUAGE=language).text
    for word in words:
        assert word in page


def test_a_broken_limit_is_named_in_the_staff_members_language(admin_a):
    response = admin_a.post(
        ADD_REPLY, reply_form(response=menu("t" * 21)), HTTP_ACCEPT_LANGUAGE="es"
    )
    errors = response.context["adminform"].form.errors["response"]
    assert "action.buttons.0.reply.title: Como máximo 20 caracteres; este tiene 21." in errors


def test_a_broken_template_rule_is_shown_in_the_staff_members_language(admin_a, org_a):
    number = Number.objects.default_for(org_a)
    response = admin_a.post(
        WRITE,
        template_form(number, body="Olá {{2}} e {{1}}", body_examples="Ana\n1"),
        HTTP_ACCEPT_LANGUAGE="pt-br",
    )
    assert response.context["form"].errors["body"] == [
        "As variáveis vão em ordem, a partir de {{1}}: {{1}}, {{2}}, ..."
    ]
    response = admin_a.post(
        WRITE, template_form(number, body_examples="Ana"), HTTP_ACCEPT_LANGUAGE="es"
    )
    assert response.context["form"].errors["body_examples"] == [
        "Dé un ejemplo para cada variable: 2 texto(s)."
    ]
    assert not MessageTemplate.objects.exists()
