"""Property test: random interleavings of creates, edits and deletes of contacts, groups
and canned replies from several threads leave the data consistent ().

Hypothesis draws a list of operations, each for one of three clients; on PostgreSQL each
client runs its operations in its own thread, all released at once, so their requests
interleave as the scheduler likes. On SQLite, which serialises writers anyway, the
operations run one after another in the order drawn. After every example:

- nothing answered 500 or above, and each answer is one the operation may get;
- of the deletes of one record exactly one answered 200, and that record is gone for good
  (no later or concurrent edit brought it back), also from the canned-reply matching;
- no live contact belongs to a deleted group;
- the contact counter equals the live rows, and each list's `meta.total` equals the
  rows a client pages through.
"""

from collections import defaultdict

import pytest
from django.db import connection
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from canned_replies import services as reply_services
from canned_replies.matching import find_reply
from canned_replies.models import CannedReply
from contacts import services
from contacts.models import Contact, ContactGroup
from tests.contacts.test_contact_counter import counted, live, run_concurrently
from tests.contacts.test_edit_delete_races import client, every_page
from tests.factories import OrganizationFactory, issue_token

CLIENTS = 3
CONTACTS, GROUPS, REPLIES, PHONES = 3, 2, 2, 5

index = st.integers(0, CONTACTS - 1)
group = st.integers(0, GROUPS - 1)
operation = st.one_of(
    st.tuples(st.just("edit contact"), index, st.sampled_from(["first_name", "email", "fav"])),
    st.tuples(st.just("delete contact"), index),
    st.tuples(st.just("create contact"), st.integers(0, PHONES - 1), st.none() | group),
    st.tuples(st.just("move contact"), index, st.integers(0, PHONES - 1)),
    st.tuples(st.just("attach contact"), index, group),
    st.tuples(st.just("rename group"), group, st.integers(0, GROUPS)),
    st.tuples(st.just("delete group"), group),
    st.tuples(st.just("edit reply"), st.integers(0, REPLIES - 1)),
    st.tuples(st.just("delete reply"), st.integers(0, REPLIES - 1)),
)
# What each operation may be told; anything else (a 500 above all) fails the example.
ALLOWED = {
    "edit contact": {200, 404},
    "delete contact": {200, 404},
    "create contact": {200, 400},  # a phone taken, or a group deleted meanwhile
    "move contact": {200, 400, 404},
    "attach contact": {200, 400, 404},
    "rename group": {200, 400, 404},
    "delete group": {200, 404},
    "edit reply": {200, 404},
    "delete reply": {200, 404},
}


EDITS = {
    "first_name": {"first_name": "B"},
    "email": {"email": "b@example.com"},
    "fav": {"is_favorite": True},
}


def phone(n: int) -> str:
    return f"44207946{n:04d}"


class World:
    """One organization's records at the start of an example, and a request for each
    operation on them."""

    def __init__(self):
        self.organization = OrganizationFactory(rate_limit=1_000_000)  # out of reach
        self.token = issue_token(self.organization)
        self.groups = [
            services.create_contact_group(organization=self.organization, name=f"G{n}")
            for n in range(GROUPS)
        ]
        self.contacts = [
            services.create_contact(organization=self.organization, phone=phone(n), first_name="A")
            for n in range(CONTACTS)
        ]
        self.replies = [
            reply_services.create_canned_reply(
                organization=self.organization,
                name=f"R{n}",
                trigger=f"trigger {n}",
                match_criteria="exact match",
                response="Hi",
            )
            for n in range(REPLIES)
        ]
        for reply in self.replies:  # each process's matching index built before the race
            assert find_reply(organization=self.organization, text=reply.trigger) == reply

    def request(self, op: tuple) -> tuple[str, str, dict | None]:
        """The method, path and body of an operation."""
        kind, *args = op
        contact = f"/api/contacts/{self.contacts[args[0] % CONTACTS].uuid}"
        group = f"/api/contact-groups/{self.groups[args[0] % GROUPS].uuid}"
        reply = f"/api/canned-replies/{self.replies[args[0] % REPLIES].uuid}"
        if kind == "create contact":
            body = {"first_name": "C", "phone": f"+{phone(args[0])}"}
            if args[1] is not None:
                body["contact_group"] = str(self.groups[args[1]].uuid)
            return "post", "/api/contacts", body
        if kind == "edit contact":
            return "patch", contact, EDITS[args[1]]
        if kind == "move contact":
            return "patch", contact, {"phone": f"+{phone(args[1])}"}
        if kind == "attach contact":
            return "patch", contact, {"contact_group": str(self.groups[args[1]].uuid)}
        if kind == "rename group":
            return "put", group, {"name": f"G{args[1]}"}
        if kind == "edit reply":
            return "put", reply, {"response": "Hello", "trigger": "edited"}
        path = {"delete contact": contact, "delete group": group, "delete reply": reply}[kind]
        return "delete", path, None

    def send(self, api, op: tuple) -> int:
        method, path, body = self.request(op)
        return getattr(api, method)(path, body, format="json").status_code

    def run(self, ops: list[tuple[int, tuple]]) -> list[tuple[tuple, int]]:
        """Every operation with the status it got."""
        if connection.vendor != "postgresql":
            api = client(self.token)
            return [(op, self.send(api, op)) for _, op in ops]
        by_client = defaultdict(list)
        for number, op in ops:
            by_client[number].append(op)

        def job(client_ops):
            api = client(self.token)
            return [(op, self.send(api, op)) for op in client_ops]

        jobs = [lambda client_ops=client_ops: job(client_ops) for client_ops in by_client.values()]
        return [answered for answers in run_concurrently(jobs) for answered in answers]


def check(world: World, answered: list[tuple[tuple, int]]) -> None:
    for op, status in answered:
        assert status in ALLOWED[op[0]], (op, status)
    for kind, records, model in (
        ("delete contact", world.contacts, Contact),
        ("delete group", world.groups, ContactGroup),
        ("delete reply", world.replies, CannedReply),
    ):
        for number, record in enumerate(records):
            deletes = [status for op, status in answered if op[:2] == (kind, number)]
            if deletes:
                assert sorted(deletes) == [200] + [404] * (len(deletes) - 1), (kind, deletes)
                assert model.objects.get(pk=record.pk).deleted_at is not None, (kind, number)
    organization = world.organization
    for text in [reply.trigger for reply in world.replies] + ["edited"]:
        answer = find_reply(organization=organization, text=text)
        assert answer is None or CannedReply.objects.get(pk=answer.pk).deleted_at is None, text
    deleted_groups = ContactGroup.objects.filter(
        organization=organization, deleted_at__isnull=False
    )
    assert not Contact.objects.live().filter(contact_group__in=deleted_groups).exists()
    assert counted(organization) == live(organization)
    for path, model in (
        ("/api/contacts", Contact),
        ("/api/contact-groups", ContactGroup),
        ("/api/canned-replies", CannedReply),
    ):
        total, rows = every_page(world.token, path)
        assert total == len(rows) == model.objects.live().filter(organization=organization).count()


@pytest.mark.django_db(transaction=True)
@settings(
    max_examples=12,
    derandomize=True,
    deadline=None,
    database=None,
    # No shrinking: a failure depends on how the threads interleaved, which a smaller
    # example does not reproduce; the first failing example is reported as drawn.
    phases=[Phase.explicit, Phase.generate],
    report_multiple_bugs=False,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.tuples(st.integers(0, CLIENTS - 1), operation), min_size=2, max_size=14))
def test_interleaved_writes_never_resurrect_a_record_and_keep_every_total_exact(ops):
    world = World()
    check(world, world.run(ops))
