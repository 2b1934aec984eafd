"""Messages recorded as sending records them (so that the figures move as they do in
production), and the figures read back."""

import threading
from contextlib import contextmanager
from datetime import UTC, date, datetime

from django.db import connections, transaction

from analytics import selectors
from business_numbers.models import Number
from sending.models import UNCOUNTED, Chat, ChatStatus
from sending.services.chats import accepted_chat, record
from tests.factories import ContactFactory
from tests.inbound.conftest import empty_outbox, webhook_org  # noqa: F401  (fixtures)
from tests.inbox.conftest import agent, fast_passwords, inbox_org, manager  # noqa: F401

# WhatsApp's pricing object on a status (Meta's Cloud API webhook reference, "statuses"
# object, per-message pricing): billable messages say so, with their category.
MARKETING = {"billable": True, "pricing_model": "PMP", "category": "marketing", "type": "regular"}
FREE = {
    "billable": False,
    "pricing_model": "PMP",
    "category": "service",
    "type": "free_customer_service",
}


def send(organization, *, wam_id: str, contact=None, created_by: int = 0) -> Chat:
    """An accepted send recorded as the send services record it."""
    contact = contact or ContactFactory(organization=organization)
    chat = accepted_chat(
        organization=organization,
        number=Number.objects.default_for(organization),
        contact=contact,
        metadata={"type": "text", "text": {"body": "Hello"}},
        message={"id": wam_id},
    )
    chat.created_by = created_by
    return record(chat)


def day_figures(organization, day: date, number=None) -> dict:
    (found,) = selectors.messages_per_day(
        organization=organization, start=day, end=day, number=number
    )
    return {**found.counts, "billable": found.billable}


def totals(organization) -> dict:
    return day_figures(organization, datetime.now(UTC).date())


@contextmanager
def held_by_a_webhook(chat: Chat):
    """A status webhook in flight (another connection, PostgreSQL) moving `chat` on to
    `delivered`: it holds the chat's row until the block ends, then commits."""
    holding, release = threading.Event(), threading.Event()

    def webhook_in_flight() -> None:
        with transaction.atomic():
            Chat.objects.filter(pk=chat.pk).update(
                counted_status=UNCOUNTED, status=ChatStatus.DELIVERED
            )
            holding.set()
            release.wait(10)
        connections.close_all()

    thread = threading.Thread(target=webhook_in_flight)
    thread.start()
    try:
        assert holding.wait(5)
        yield
    finally:
        release.set()
        thread.join()
