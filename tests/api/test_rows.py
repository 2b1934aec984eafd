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


# What two chats made alike differ in when both are stored.
OWN_VALUES = ("id", "uuid", "wam_id", "created_at")


def stored_alike(chat: Chat) -> dict:
    """The chat as stored, without what two chats made alike differ in."""
    return {name: value for name, value in stored(chat).items() if name not in OWN_VALUES}


def test_an_insert_stores_what_save_stores(org_a, django_assert_num_queries):
    saved = chat_of(org_a, "wamid.saved")
    saved.save(force_insert=True)
    inserted = chat_of(org_a, "wamid.inserted")
    with django_assert_num_queries(1):
        rows.insert(inserted, connection)

    assert inserted.pk is not None and inserted.pk != saved.pk
    assert not inserted._state.adding
    assert inserted.created_at is not None  # auto_now_add, set as save() sets it
    assert stored_alike(inserted) == stored_alike(saved)
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


def test_insert_all_stores_what_bulk_create_stores(org_a, django_assert_num_queries):
    made = [chat_of(org_a, f"wamid.bulk-{n}") for n in range(3)]
    inserted = [chat_of(org_a, f"wamid.all-{n}") for n in range(3)]
    for chats in (made, inserted):
        chats[1].error_details = {"code": 131026, "quote": 'it\'s "odd"'}
    Chat.objects.bulk_create(made)
    with django_assert_num_queries(1):
        rows.insert_all(inserted, connection)

    for ours, theirs in zip(inserted, made, strict=True):
        assert not ours._state.adding and ours._state.db == "default"
        # Each key is its own row's: the rows come back in order.
        assert Chat.objects.get(pk=ours.pk).uuid == ours.uuid
        assert ours.created_at is not None  # auto_now_add, set as bulk_create() sets it
        assert stored_alike(ours) == stored_alike(theirs)


def test_insert_all_goes_in_statements_of_at_most_its_rows(
    org_a, monkeypatch, django_assert_num_queries
):
    monkeypatch.setattr(rows, "INSERT_ALL_ROWS", 2)
    inserted = [chat_of(org_a, f"wamid.chunk-{n}") for n in range(5)]
    # On SQLite bulk_create() makes its own batches (of up to 999 values' rows): one.
    with django_assert_num_queries(3 if connection.vendor == "postgresql" else 1):
        rows.insert_all(inserted, connection)
    assert [Chat.objects.get(pk=chat.pk).wam_id for chat in inserted] == [
        f"wamid.chunk-{n}" for n in range(5)
    ]
    rows.insert_all([], connection)  # nothing, no statement


def test_insert_all_that_breaks_a_constraint_raises_and_stores_none(org_a):
    first = chat_of(org_a, "wamid.first")
    rows.insert(first, connection)
    batch = [chat_of(org_a, "wamid.fine"), chat_of(org_a, "wamid.clash")]
    batch[1].uuid = first.uuid  # unique
    with pytest.raises(IntegrityError), transaction.atomic():
        rows.insert_all(batch, connection)
    assert not Chat.objects.filter(wam_id__in=["wamid.fine", "wamid.clash"]).exists()


def loaded_by_the_orm(model, pk) -> dict:
    row = model.objects.get(pk=pk)
    return {name: value for name, value in vars(row).items() if name != "_state"}


def test_an_instance_is_the_one_the_orm_loads(org_a):
    """Each column converted as the ORM converts it (JSON, decrypted secrets), the
    instance loaded from its database and not new."""
    chat = chat_of(org_a, "wamid.loaded")
    chat.save()
    number = Number.objects.default_for(org_a)
    for model, pk in (
        (Chat, chat.pk),
        (Contact, chat.contact_id),
        (Conversation, chat.conversation_id),
        (Number, number.pk),
    ):
        columns = ", ".join(field.column for field in model._meta.concrete_fields)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {columns} FROM {model._meta.db_table} WHERE id = %s", [pk])  # noqa: S608
            made = rows.instance(model, connection, cursor.fetchone())
        assert type(made) is model
        assert {k: v for k, v in vars(made).items() if k != "_state"} == loaded_by_the_orm(
            model, pk
        )
        assert made._state.adding is False and made._state.db == "default"
    assert made.access_token == number.access_token  # decrypted, as the ORM's


def test_an_instance_loads_its_relations_as_the_orms(org_a, django_assert_num_queries):
    chat = chat_of(org_a, "wamid.related")
    chat.save()
    columns = rows.columns(Chat, "chat")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns} FROM {Chat._meta.db_table} chat WHERE id = %s", [chat.pk])  # noqa: S608
        made = rows.instance(Chat, connection, cursor.fetchone())
    with django_assert_num_queries(1):
        assert made.contact.phone == "+447700900123"
    with django_assert_num_queries(0):
        assert made.contact.pk == made.contact_id


def test_a_model_with_an_init_receiver_is_made_by_from_db(org_a, monkeypatch):
    """A receiver of post_init (as an ImageField with dimensions has) still hears each
    instance made."""
    from django.db.models.signals import post_init

    heard = []

    def receiver(sender, instance, **kwargs):
        heard.append(instance.pk)

    monkeypatch.setattr(rows, "_plain", {})  # looked at again, with the receiver in place
    post_init.connect(receiver, sender=Contact)
    try:
        contact = Contact.objects.create(organization=org_a, phone="+447700900124")
        heard.clear()
        rows.loaded(
            Contact, "default", [getattr(contact, f.attname) for f in Contact._meta.concrete_fields]
        )
    finally:
        post_init.disconnect(receiver, sender=Contact)
    assert heard == [contact.pk]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's loaders")
def test_timestamps_load_as_djangos_in_utc(org_a):
    """messaging_project/core/database.py's loader: the same value and tzinfo as Django's
    own, which it stands in for on a connection in UTC."""
    from datetime import UTC, datetime

    from messaging_project.core.database import UTCTimestampLoader

    with connection.cursor() as cursor:
        assert cursor.cursor.adapters.get_loader(1184, 0) is UTCTimestampLoader
        cursor.execute(
            "SELECT %s::timestamptz, NULL::timestamptz, '2026-03-29 01:30:00.123456+05:30'::timestamptz",
            [datetime(2026, 11, 29, 1, 2, 3, 456789, tzinfo=UTC)],
        )
        given, nothing, offset = cursor.fetchone()
    assert given == datetime(2026, 11, 29, 1, 2, 3, 456789, tzinfo=UTC) and given.tzinfo is UTC
    assert nothing is None
    assert offset == datetime(2026, 3, 28, 20, 0, 0, 123456, tzinfo=UTC) and offset.tzinfo is UTC


def test_the_connection_proxy_is_resolved_to_the_threads_connection():
    from django.db import connections
    from django.db.backends.base.base import BaseDatabaseWrapper

    # Every attribute of django.db.connection is a look-up in asgiref's Local: the rows
    # are prepared and converted with the connection it stands for.
    assert not isinstance(connection, BaseDatabaseWrapper)
    assert rows.wrapper(connection) is connections["default"]
    assert rows.wrapper(connections["default"]) is connections["default"]
