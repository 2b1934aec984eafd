"""A concurrent edit never brings a deleted canned reply back, so a deleted reply never
answers a customer again (). Races run on PostgreSQL, as in
tests/contacts/test_edit_delete_races.py."""

import json

import pytest
from django.http import Http404

from canned_replies import services
from canned_replies.matching import find_reply
from canned_replies.models import CannedReply
from tests.contacts.test_contact_counter import on_postgresql, run_concurrently
from tests.contacts.test_edit_delete_races import (
    PAIRS,
    behind_an_uncommitted_delete,
    call,
    client,
    every_page,
)
from tests.factories import issue_token


def make_reply(organization, n: int = 0) -> CannedReply:
    return services.create_canned_reply(
        organization=organization,
        name=f"Opening hours {n}",
        trigger=f"hours {n}",
        match_criteria="contains",
        response="9 to 5",
    )


def test_an_edit_of_a_reply_deleted_since_it_was_read_is_not_found_and_it_stays_deleted(org_a):
    reply = make_reply(org_a)
    read_before = CannedReply.objects.get(pk=reply.pk)
    services.delete_canned_reply(reply=reply)
    with pytest.raises(Http404):
        services.update_canned_reply(reply=read_before, changes={"response": "8 to 6"})
    reply.refresh_from_db()
    assert reply.deleted_at is not None and reply.response_text == "9 to 5"
    assert find_reply(organization=org_a, text="your hours 0?") is None


def test_two_edits_of_different_fields_from_the_same_read_both_stay(org_a):
    reply = make_reply(org_a)
    first, second = CannedReply.objects.get(pk=reply.pk), CannedReply.objects.get(pk=reply.pk)
    services.update_canned_reply(reply=first, changes={"response": "8 to 6"})
    services.update_canned_reply(reply=second, changes={"trigger": "open", "name": "Open"})
    reply.refresh_from_db()
    assert (reply.name, reply.trigger, reply.response_text) == ("Open", "open", "8 to 6")
    assert find_reply(organization=org_a, text="are you open?") == reply


def test_an_edit_does_not_change_the_callers_arguments(org_a):
    reply = make_reply(org_a)
    changes = {"response": "8 to 6", "name": "Open"}
    services.update_canned_reply(reply=reply, changes=changes)
    assert changes == {"response": "8 to 6", "name": "Open"}
    assert reply.response_text == "8 to 6" and reply.name == "Open"


def test_a_reply_deleted_twice_from_the_same_read_is_not_found_the_second_time(org_a):
    reply = make_reply(org_a)
    read_before = CannedReply.objects.get(pk=reply.pk)
    services.delete_canned_reply(reply=reply, deleted_by=7)
    with pytest.raises(Http404):
        services.delete_canned_reply(reply=read_before, deleted_by=8)
    assert CannedReply.objects.get(pk=reply.pk).deleted_by == 7


@on_postgresql
def test_put_racing_delete_never_brings_a_reply_back_nor_lets_it_answer(racing_org):
    token = issue_token(racing_org)
    make_reply(racing_org, n=999)  # untouched
    for n in range(PAIRS):
        reply = make_reply(racing_org, n)
        assert find_reply(organization=racing_org, text=f"hours {n}?") == reply  # index warm
        path = f"/api/canned-replies/{reply.uuid}"
        edit, delete = run_concurrently(
            [
                call(token, "put", path, {"response": "8 to 6"}),
                call(token, "delete", path),
            ]
        )
        assert delete.status_code == 200
        assert edit.status_code in (200, 404), edit.content
        assert client(token).get(path).status_code == 404
        assert find_reply(organization=racing_org, text=f"hours {n}?") is None
    total, rows = every_page(token, "/api/canned-replies")
    assert total == len(rows) == 1 == CannedReply.objects.live().count()


@on_postgresql
def test_an_edit_that_waited_for_a_delete_is_not_found(racing_org):
    token = issue_token(racing_org)
    reply = make_reply(racing_org)
    path = f"/api/canned-replies/{reply.uuid}"
    edit = behind_an_uncommitted_delete(
        lambda: services.delete_canned_reply(reply=reply),
        call(token, "patch", path, {"trigger": "when open"}),
    )
    assert edit.status_code == 404
    assert find_reply(organization=racing_org, text="hours 0") is None
    assert find_reply(organization=racing_org, text="when open") is None


@on_postgresql
def test_concurrent_deletes_of_a_reply_answer_exactly_one_200(racing_org):
    token = issue_token(racing_org)
    for n in range(PAIRS // 2):
        path = f"/api/canned-replies/{make_reply(racing_org, n).uuid}"
        answers = run_concurrently([call(token, "delete", path)] * 3)
        assert sorted(answer.status_code for answer in answers) == [200, 404, 404]
    assert every_page(token, "/api/canned-replies") == (0, [])


@on_postgresql
def test_concurrent_patches_of_different_fields_both_stay(racing_org):
    token = issue_token(racing_org)
    for n in range(PAIRS // 2):
        path = f"/api/canned-replies/{make_reply(racing_org, n).uuid}"
        answers = run_concurrently(
            [
                call(token, "patch", path, {"response": f"R{n}"}),
                call(token, "patch", path, {"trigger": f"T{n}"}),
                call(token, "patch", path, {"name": f"N{n}"}),
            ]
        )
        assert [answer.status_code for answer in answers] == [200, 200, 200]
        stored = client(token).get(path).json()["data"]
        assert (stored["name"], stored["trigger"]) == (f"N{n}", f"T{n}")
        assert json.loads(stored["metadata"])["data"]["text"] == f"R{n}"
