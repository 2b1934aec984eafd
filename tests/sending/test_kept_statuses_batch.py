"""A campaign's batch recorded after WhatsApp posted some of its statuses: each chat
takes the statuses kept aside for it, in a fixed number of statements for the batch
(sending/services/statuses.py, `apply_all_kept_statuses`)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from business_numbers.models import Number
from contacts.models import Contact
from sending.models import Chat, ChatStatusEvent
from sending.services.chats import accepted_chat, record_accepted
from tests.inbound.conftest import deliver, envelope, status, statuses

pytestmark = pytest.mark.django_db

UNDELIVERABLE = [{"code": 131026, "title": "Message undeliverable"}]


def batch(organization, first: int, count: int) -> list[Chat]:
    number = Number.objects.default_for(organization)
    return [
        accepted_chat(
            organization=organization,
            number=number,
            contact=Contact.objects.create(organization=organization, phone=f"4915112{n:06d}"),
            metadata={"type": "template", "template": {"name": "sale"}},
            message={"id": f"wamid.kept-{n}"},
        )
        for n in range(first, first + count)
    ]


def kept_before(organization, *items) -> None:
    assert deliver(organization, envelope(statuses(*items))).status_code == 200
    assert not ChatStatusEvent.objects.filter(chat__isnull=False).exists()


def test_each_chat_of_a_batch_takes_the_statuses_kept_for_it(webhook_org):
    kept_before(
        webhook_org,
        status("wamid.kept-0", "sent", 1700000001),
        status("wamid.kept-0", "delivered", 1700000002),
        status("wamid.kept-1", "sent", 1700000001),
        status("wamid.kept-2", "failed", 1700000001, errors=UNDELIVERABLE),
        # Out of order, as WhatsApp may post them: the chat ends at the highest.
        status("wamid.kept-3", "delivered", 1700000002),
        status("wamid.kept-3", "sent", 1700000001),
    )

    record_accepted(batch(webhook_org, 0, 5))

    chats = {chat.wam_id: chat for chat in Chat.objects.all()}
    assert {wam_id: chat.status for wam_id, chat in chats.items()} == {
        "wamid.kept-0": "delivered",
        "wamid.kept-1": "sent",
        "wamid.kept-2": "failed",
        "wamid.kept-3": "delivered",
        "wamid.kept-4": "accepted",
    }
    assert chats["wamid.kept-2"].error_code == 131026
    assert not ChatStatusEvent.objects.filter(chat__isnull=True).exists()
    for wam_id, count in {"wamid.kept-0": 2, "wamid.kept-3": 2, "wamid.kept-4": 0}.items():
        assert chats[wam_id].status_events.count() == count
        assert set(chats[wam_id].status_events.values_list("wam_id", flat=True)) <= {wam_id}


def test_a_batch_takes_its_kept_statuses_in_as_many_statements_however_many(webhook_org):
    def statements(first: int, count: int) -> int:
        kept_before(
            webhook_org,
            *(status(f"wamid.kept-{n}", "sent", 1700000001) for n in range(first, first + count)),
        )
        chats = batch(webhook_org, first, count)
        with CaptureQueriesContext(connection) as queries:
            record_accepted(chats)
        ChatStatusEvent.objects.update(chat=None)  # (only for kept_before's check)
        return len(queries)

    assert statements(0, 2) == statements(10, 6)
    assert set(Chat.objects.values_list("status", flat=True)) == {"sent"}
