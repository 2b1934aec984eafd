"""messaging_project/core/rows.py: written-out statements make and store the records the
ORM would."""

import pytest
from django.db import IntegrityError, connection, transaction

from business_numbers.models import Number
from contacts.models import Contact
from messaging_project.core import rows
from sending.models import Chat, Conversation

pytestmark = pytest.mark.django_db


def chat_of(organization, wam_id: str) -> Chat:
    contact = Contact.objects.get_or_create(organization=organization, phone="+447700900123")[0]
    number = Number.objects.default_for(organization)
    conversation = Conversation.objects.get_or_create(
        organization=organization, contact=contact, number=number
    )[0]
    return Chat(
        organization=organization,
        contact=contact,
        number=number,
        conversation=conversation,
        wam_id=wam_id,
        type="text",
        metadata={"type": "text", "text": "Grüße 👋"},
        status="sent",
    )


def stored(chat: Chat) -> dict:
    row = Chat.objects.get(pk=chat.pk)
    return {field.attname: getattr(row, field.attname) for field in Chat._meta.concrete_fields}


def test_an_insert_stores_what_save_stores(org_a, django_assert_num_queries):
    saved = chat_of(org_a, "wamid.saved")
    saved.save(force_insert=True)
    inserted = chat_of(org_a, "wamid.inserted")
    with django_assert_num_queries(1):
        rows.insert(inserted, connection)

    assert inserted.pk is not None and inserted.pk != saved.pk
    assert not inserted._state.adding
    assert inserted.created_at is not None  # auto_now_add, set as save() sets it
    ours, theirs = stored(inserted), stored(saved)
    for differs in ("id", "uuid", "wam_id", "created_at"):
        ours.pop(differs)
        theirs.pop(differs)
    assert ours == theirs
    assert Chat.objects.get(pk=inserted.pk).metadata == {"type": "text", "text": "Grüße 👋"}
    assert Chat.objects.get(pk=inserted.pk).uuid == inserted.uuid


def test_an_insert_that_breaks_a_constraint_raises_as_save_does(org_a):
    first = chat_of(org_a, "wamid.twice")
    rows.insert(first, connection)
    again = chat_of(org_a, "wamid.other")
    again.uuid = first.uuid  # unique
    with pytest.raises(IntegrityError), transaction.atomic():
        rows.insert(again, connection)
    assert Chat.objects.filter(uuid=first.uuid).count() == 1
