"""Canned replies in the admin: the request fields instead of raw JSON, saves and
soft deletes through canned_replies.services, and the "test a message" box."""

import pytest
from django.urls import reverse

from canned_replies.models import CannedReply
from tests.factories import CannedReplyFactory

pytestmark = pytest.mark.django_db

ADD = reverse("admin:canned_replies_cannedreply_add")
TEST = reverse("admin:canned_replies_cannedreply_test_message")


def reply_form(**changes) -> dict:
    return {
        "name": "Opening hours",
        "trigger": "hours",
        "match_criteria": "contains",
        "response_type": "text",
        "response": "We are open 9 to 5.",
        **changes,
    }


def test_the_form_has_the_request_fields_not_raw_json(admin_a):
    fields = admin_a.get(ADD).context["adminform"].form.fields
    assert set(fields) == {"name", "trigger", "match_criteria", "response_type", "response"}


def test_adding_a_reply_stores_the_response_as_metadata(admin_a, staff_a, org_a):
    response = admin_a.post(ADD, reply_form())
    assert response.status_code == 302
    reply = CannedReply.objects.get()
    assert reply.organization == org_a
    assert reply.created_by == staff_a.pk
    assert reply.metadata == {"type": "text", "data": {"text": "We are open 9 to 5."}}


def test_match_criteria_must_be_one_of_the_four(admin_a):
    response = admin_a.post(ADD, reply_form(match_criteria="regex"))
    assert "match_criteria" in response.context["adminform"].form.errors
    assert not CannedReply.objects.exists()


def test_the_change_form_shows_the_response_and_saves_it(admin_a, org_a):
    reply = CannedReplyFactory(organization=org_a, name="Greeting")
    url = reverse("admin:canned_replies_cannedreply_change", args=[reply.pk])
    assert "Hi there!" in admin_a.get(url).text
    admin_a.post(url, reply_form(name="Greeting", trigger="hello", response="Hello back"))
    reply.refresh_from_db()
    assert reply.response_text == "Hello back"
    assert reply.trigger == "hello"


def test_deleting_a_reply_is_a_soft_delete_with_who_deleted_it(admin_a, staff_a, org_a):
    reply = CannedReplyFactory(organization=org_a)
    url = reverse("admin:canned_replies_cannedreply_delete", args=[reply.pk])
    admin_a.post(url, {"post": "yes"})
    reply.refresh_from_db()
    assert reply.deleted_at is not None
    assert reply.deleted_by == staff_a.pk


def test_the_list_shows_the_response_text(admin_a, org_a):
    CannedReplyFactory(organization=org_a, metadata={"type": "text", "data": {"text": "Ahoy"}})
    response = admin_a.get(reverse("admin:canned_replies_cannedreply_changelist"))
    assert "Ahoy" in response.text
    assert TEST in response.text


def test_the_test_box_shows_the_reply_that_would_answer(admin_a, records_a, records_b):
    response = admin_a.get(TEST, {"message": "What are your ALPHA   hours?"})
    assert response.status_code == 200
    assert response.context["reply"] == records_a["cannedreply"]
    assert "Alpha is open 9 to 5." in response.text


def test_the_test_box_never_answers_with_another_organizations_reply(admin_a, records_a, records_b):
    response = admin_a.get(TEST, {"message": "bravo hours"})
    assert response.context["reply"] is None
    assert "No reply would answer this message" in response.text
    assert "Bravo" not in response.text


def test_superusers_pick_the_organization_to_test(admin_super, org_b, records_a, records_b):
    response = admin_super.get(TEST, {"message": "bravo hours", "organization": org_b.pk})
    assert response.context["reply"] == records_b["cannedreply"]
    assert admin_super.get(TEST, {"message": "bravo hours"}).context["reply"] is None


def test_the_test_box_follows_edits_made_in_the_admin(admin_a):
    admin_a.post(ADD, reply_form())
    assert admin_a.get(TEST, {"message": "your hours?"}).context["reply"].name == "Opening hours"
    reply = CannedReply.objects.get()
    url = reverse("admin:canned_replies_cannedreply_change", args=[reply.pk])
    admin_a.post(url, reply_form(trigger="open", match_criteria="exact match"))
    assert admin_a.get(TEST, {"message": "your hours?"}).context["reply"] is None
    assert admin_a.get(TEST, {"message": " OPEN "}).context["reply"] == reply
