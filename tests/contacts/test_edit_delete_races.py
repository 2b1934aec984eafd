"""A concurrent edit never brings a deleted contact or group back ().

An edit applies only to a live record and writes only the fields it names; the loser
of a race with a delete is told 404. The tests with a record read before it was
deleted run everywhere; the races themselves need concurrent transactions, so they run
on PostgreSQL and are skipped on SQLite, which serialises writers anyway.
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, connections, transaction
from django.http import Http404
from rest_framework.test import APIClient

from contacts import services
from contacts.models import Contact, ContactGroup
from tests.contacts.test_contact_counter import counted, live, on_postgresql, run_concurrently
from tests.factories import issue_token

PAIRS = 30
GROUP_INVALID = "The selected contact group is invalid."


def phone(n: int) -> str:
    return f"44207946{n:04d}"


def client(token: str) -> APIClient:
    """A client of its own for each thread: the test client is not thread-safe."""
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return api


def call(token: str, method: str, path: str, body: dict | None = None):
    """A job for run_concurrently: one request, made with a client of its own."""
    return lambda: getattr(client(token), method)(path, body, format="json")


def every_page(token: str, path: str) -> tuple[int, list[dict]]:
    """The list's `meta.total` and every row paged through, page by page."""
    rows, page, total = [], 1, None
    while True:
        body = client(token).get(path, {"page": page, "per_page": 7}).json()
        total = body["meta"]["total"] if total is None else total
        assert body["meta"]["total"] == total
        rows += body["data"]
        if page >= body["meta"]["last_page"]:
            return total, rows
        page += 1


def wait_for_a_lock_waiter(timeout: float = 10) -> None:
    """Returns once another connection to this database waits for a lock."""
    deadline = time.monotonic() + timeout
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            )
            if cursor.fetchone()[0]:
                return
            time.sleep(0.01)
    raise AssertionError("No query waited for the uncommitted delete's lock.")


def behind_an_uncommitted_delete(delete, edit):
    """Runs `delete` in a transaction that stays open until `edit`, started meanwhile in
    another thread (so it still reads the record live), waits for its lock; then commits
    it and returns what `edit` returned. The loser's side of the race, every time."""
    deleted, release = threading.Event(), threading.Event()

    def deleting():
        try:
            with transaction.atomic():
                delete()
                deleted.set()
                release.wait(10)
        finally:
            connections.close_all()

    def editing():
        try:
            return edit()
        finally:
            connections.close_all()

    with ThreadPoolExecutor(2) as pool:
        done = pool.submit(deleting)
        assert deleted.wait(10)
        result = pool.submit(editing)
        try:
            wait_for_a_lock_waiter()
        finally:
            release.set()
        done.result()
        return result.result()


# With a record read before it was deleted (every database) ------------------------------


def test_an_edit_of_a_contact_deleted_since_it_was_read_is_not_found_and_keeps_it_deleted(org_a):
    contact = services.create_contact(organization=org_a, phone=phone(1), first_name="Ada")
    read_before = Contact.objects.get(pk=contact.pk)
    services.delete_contact(contact=contact)
    with pytest.raises(Http404):
        services.update_contact(contact=read_before, changes={"first_name": "Grace"})
    contact.refresh_from_db()
    assert contact.deleted_at is not None and contact.first_name == "Ada"
    assert live(org_a) == 0 == counted(org_a)


def test_two_edits_of_different_fields_from_the_same_read_both_stay(org_a):
    contact = services.create_contact(organization=org_a, phone=phone(1), first_name="Ada")
    first, second = Contact.objects.get(pk=contact.pk), Contact.objects.get(pk=contact.pk)
    services.update_contact(contact=first, changes={"first_name": "Grace"})
    services.update_contact(contact=second, changes={"last_name": "Hopper", "is_favorite": True})
    contact.refresh_from_db()
    assert (contact.first_name, contact.last_name, contact.is_favorite) == ("Grace", "Hopper", True)


def test_an_edit_moves_updated_at(org_a):
    contact = services.create_contact(organization=org_a, phone=phone(1), first_name="Ada")
    created = contact.updated_at
    services.update_contact(contact=contact, changes={"email": "ada@example.com"})
    stored = Contact.objects.get(pk=contact.pk)
    assert stored.updated_at > created and stored.updated_at == contact.updated_at


def test_an_edit_to_a_phone_taken_meanwhile_is_400_on_phone(org_a):
    contact = services.create_contact(organization=org_a, phone=phone(1), first_name="Ada")
    services.create_contact(organization=org_a, phone=phone(2), first_name="Grace")
    with pytest.raises(ValidationError) as refused:
        services.update_contact(contact=contact, changes={"phone": phone(2)})
    assert refused.value.message_dict == {"phone": [services.DUPLICATE_PHONE]}
    assert Contact.objects.get(pk=contact.pk).phone == phone(1)


def test_a_contact_deleted_twice_from_the_same_read_is_not_found_the_second_time(org_a):
    contact = services.create_contact(organization=org_a, phone=phone(1), first_name="Ada")
    services.create_contact(organization=org_a, phone=phone(2), first_name="Grace")
    read_before = Contact.objects.get(pk=contact.pk)
    services.delete_contact(contact=contact)
    with pytest.raises(Http404):
        services.delete_contact(contact=read_before)
    assert live(org_a) == 1 == counted(org_a)


def test_a_rename_of_a_group_deleted_since_it_was_read_is_not_found(org_a):
    group = services.create_contact_group(organization=org_a, name="Clients")
    read_before = ContactGroup.objects.get(pk=group.pk)
    services.delete_contact_group(group=group)
    with pytest.raises(Http404):
        services.update_contact_group(group=read_before, changes={"name": "Renamed"})
    group.refresh_from_db()
    assert group.deleted_at is not None and group.name == "Clients"


def test_a_group_deleted_twice_from_the_same_read_is_not_found_the_second_time(org_a):
    group = services.create_contact_group(organization=org_a, name="Clients")
    read_before = ContactGroup.objects.get(pk=group.pk)
    services.delete_contact_group(group=group)
    deleted_at = ContactGroup.objects.get(pk=group.pk).deleted_at
    with pytest.raises(Http404):
        services.delete_contact_group(group=read_before)
    assert ContactGroup.objects.get(pk=group.pk).deleted_at == deleted_at


def test_a_contact_given_a_group_deleted_since_it_was_read_is_400_on_the_group(org_a):
    group = services.create_contact_group(organization=org_a, name="Clients")
    contact = services.create_contact(organization=org_a, phone=phone(1), first_name="Ada")
    read_before = ContactGroup.objects.get(pk=group.pk)
    services.delete_contact_group(group=group)
    with pytest.raises(ValidationError) as refused:
        services.create_contact(
            organization=org_a, phone=phone(2), first_name="Grace", contact_group=read_before
        )
    assert refused.value.message_dict == {"contact_group": [GROUP_INVALID]}
    with pytest.raises(ValidationError) as refused:
        services.update_contact(contact=contact, changes={"contact_group": read_before})
    assert refused.value.message_dict == {"contact_group": [GROUP_INVALID]}
    assert not Contact.objects.filter(contact_group=group).exists()
    assert live(org_a) == 1 == counted(org_a)


# Races (PostgreSQL) ----------------------------------------------------------------------


@on_postgresql
def test_put_racing_delete_never_brings_a_contact_back(racing_org):
    token = issue_token(racing_org)
    for n in range(3):  # untouched, so that the total has something to count
        services.create_contact(organization=racing_org, phone=phone(9000 + n), first_name="K")
    for n in range(PAIRS):
        contact = services.create_contact(organization=racing_org, phone=phone(n), first_name="A")
        path = f"/api/contacts/{contact.uuid}"
        edit, delete = run_concurrently(
            [call(token, "put", path, {"first_name": "B"}), call(token, "delete", path)]
        )
        assert delete.status_code == 200
        assert edit.status_code in (200, 404), edit.content
        assert client(token).get(path).status_code == 404
        assert Contact.objects.get(pk=contact.pk).deleted_at is not None
    assert live(racing_org) == 3 == counted(racing_org)
    total, rows = every_page(token, "/api/contacts")
    assert total == len(rows) == 3


@on_postgresql
def test_an_edit_that_waited_for_a_delete_is_not_found(racing_org):
    token = issue_token(racing_org)
    contact = services.create_contact(organization=racing_org, phone=phone(1), first_name="A")
    path = f"/api/contacts/{contact.uuid}"
    edit = behind_an_uncommitted_delete(
        lambda: services.delete_contact(contact=contact),
        call(token, "patch", path, {"first_name": "B"}),
    )
    assert edit.status_code == 404
    assert edit.json() == {"statusCode": 404, "message": "Not found."}
    assert client(token).get(path).status_code == 404
    assert live(racing_org) == 0 == counted(racing_org)


@on_postgresql
def test_concurrent_deletes_of_a_contact_answer_exactly_one_200(racing_org):
    token = issue_token(racing_org)
    for n in range(PAIRS // 2):
        contact = services.create_contact(organization=racing_org, phone=phone(n), first_name="A")
        answers = run_concurrently([call(token, "delete", f"/api/contacts/{contact.uuid}")] * 3)
        assert sorted(answer.status_code for answer in answers) == [200, 404, 404]
    assert live(racing_org) == 0 == counted(racing_org)
    assert every_page(token, "/api/contacts") == (0, [])


@on_postgresql
def test_concurrent_patches_of_different_fields_all_stay(racing_org):
    token = issue_token(racing_org)
    for n in range(PAIRS // 2):
        contact = services.create_contact(organization=racing_org, phone=phone(n), first_name="A")
        path = f"/api/contacts/{contact.uuid}"
        answers = run_concurrently(
            [
                call(token, "patch", path, {"first_name": f"F{n}"}),
                call(token, "patch", path, {"email": f"e{n}@example.com"}),
                call(token, "patch", path, {"is_favorite": True}),
            ]
        )
        assert [answer.status_code for answer in answers] == [200, 200, 200]
        stored = client(token).get(path).json()["data"]
        assert (stored["first_name"], stored["email"], stored["is_favorite"]) == (
            f"F{n}",
            f"e{n}@example.com",
            1,
        )


@on_postgresql
def test_concurrent_edits_to_the_same_phone_answer_one_200_and_400s_on_phone(racing_org):
    token = issue_token(racing_org)
    for n in range(PAIRS // 4):
        contacts = [
            services.create_contact(
                organization=racing_org, phone=phone(10 * n + k), first_name="A"
            )
            for k in range(3)
        ]
        taken = phone(10 * n + 9)
        answers = run_concurrently(
            [
                call(token, "put", f"/api/contacts/{c.uuid}", {"phone": f"+{taken}"})
                for c in contacts
            ]
        )
        assert sorted(answer.status_code for answer in answers) == [200, 400, 400]
        for answer in answers:
            if answer.status_code == 400:
                assert answer.json()["errors"] == {"phone": [services.DUPLICATE_PHONE]}
        assert Contact.objects.live().filter(phone=taken).count() == 1


@on_postgresql
def test_put_racing_delete_never_brings_a_group_back(racing_org):
    token = issue_token(racing_org)
    services.create_contact_group(organization=racing_org, name="Untouched")
    for n in range(PAIRS):
        group = services.create_contact_group(organization=racing_org, name=f"Group {n}")
        path = f"/api/contact-groups/{group.uuid}"
        edit, delete = run_concurrently(
            [call(token, "put", path, {"name": f"Renamed {n}"}), call(token, "delete", path)]
        )
        assert delete.status_code == 200
        assert edit.status_code in (200, 404), edit.content
        assert client(token).get(path).status_code == 404
    total, rows = every_page(token, "/api/contact-groups")
    assert total == len(rows) == 1 == ContactGroup.objects.live().count()


@on_postgresql
def test_a_rename_that_waited_for_a_delete_is_not_found(racing_org):
    token = issue_token(racing_org)
    group = services.create_contact_group(organization=racing_org, name="Clients")
    path = f"/api/contact-groups/{group.uuid}"
    edit = behind_an_uncommitted_delete(
        lambda: services.delete_contact_group(group=group),
        call(token, "put", path, {"name": "Renamed"}),
    )
    assert edit.status_code == 404
    assert ContactGroup.objects.get(pk=group.pk).deleted_at is not None


@on_postgresql
def test_concurrent_deletes_of_a_group_answer_exactly_one_200(racing_org):
    token = issue_token(racing_org)
    for n in range(PAIRS // 2):
        group = services.create_contact_group(organization=racing_org, name=f"Group {n}")
        answers = run_concurrently([call(token, "delete", f"/api/contact-groups/{group.uuid}")] * 3)
        assert sorted(answer.status_code for answer in answers) == [200, 404, 404]
    assert every_page(token, "/api/contact-groups") == (0, [])


@on_postgresql
def test_concurrent_renames_to_the_same_name_answer_one_200_and_400s_on_name(racing_org):
    token = issue_token(racing_org)
    for n in range(PAIRS // 4):
        groups = [
            services.create_contact_group(organization=racing_org, name=f"Group {n}.{k}")
            for k in range(3)
        ]
        answers = run_concurrently(
            [
                call(token, "put", f"/api/contact-groups/{g.uuid}", {"name": f"Same {n}"})
                for g in groups
            ]
        )
        assert sorted(answer.status_code for answer in answers) == [200, 400, 400]
        for answer in answers:
            if answer.status_code == 400:
                assert answer.json()["errors"] == {"name": [services.DUPLICATE_GROUP]}


@on_postgresql
def test_a_group_deleted_while_contacts_are_attached_to_it_keeps_no_live_contact(racing_org):
    token = issue_token(racing_org)
    for n in range(PAIRS):
        group = services.create_contact_group(organization=racing_org, name=f"Group {n}")
        moved = services.create_contact(organization=racing_org, phone=phone(2 * n), first_name="M")
        attached = {"contact_group": str(group.uuid)}
        created = {"first_name": "New", "phone": f"+{phone(2 * n + 1)}", **attached}
        attach, create, delete = run_concurrently(
            [
                call(token, "patch", f"/api/contacts/{moved.uuid}", attached),
                call(token, "post", "/api/contacts", created),
                call(token, "delete", f"/api/contact-groups/{group.uuid}"),
            ]
        )
        assert delete.status_code == 200
        for answer in (attach, create):
            assert answer.status_code in (200, 400), answer.content
            if answer.status_code == 400:
                assert answer.json()["errors"] == {"contact_group": [GROUP_INVALID]}
        assert not Contact.objects.live().filter(contact_group=group).exists(), n
    assert live(racing_org) == counted(racing_org)
    total, rows = every_page(token, "/api/contacts")
    assert total == len(rows) == live(racing_org)
