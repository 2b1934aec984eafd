"""Sending's hand-written SQL: the conversations' upsert, the statuses kept aside for a
chat not yet recorded, the locks on message ids, and a status webhook's reads and writes.
Each statement says what earns it its place beside the ORM; every one runs on
PostgreSQL in the suite."""

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from django.db import connection
from django.utils import timezone

from business_numbers.models import Number
from contacts.models import Contact
from messaging_project.core import rows
from messaging_project.core.database import (
    Statement,
    among,
    column_types,
    fetch_together,
    rows_of,
)
from sending.models import (
    Chat,
    ChatStatus,
    ChatStatusEvent,
    Conversation,
    ConversationStatus,
)

# The conversations of a batch of chats, found or made, and moved by the chats, in one
# statement (the ORM's upsert sets columns only to the values offered; here the unread
# count adds up, the times keep the latest, and an inbound message reopens). A row
# offered with `unread` above zero carries new inbound messages. The row's lock, taken
# by the upsert, orders it with staff's changes (inbox/services.py). `status_changed_at`
# set to this statement's moment tells a reopening (`status_changed_at = %s`, returned).
CONVERSATION = Conversation._meta.db_table
OPEN = ConversationStatus.OPEN.value
UPSERT_CONVERSATIONS = f"""
    INSERT INTO {CONVERSATION}
        (uuid, organization_id, contact_id, number_id, status, labels, unread, messages,
         last_message_at, last_inbound_at, status_changed_at, created_at)
    {{rows}}
    ON CONFLICT (contact_id, number_id) DO UPDATE SET
        unread = {CONVERSATION}.unread + excluded.unread,
        messages = {CONVERSATION}.messages + excluded.messages,
        status = CASE WHEN excluded.unread > 0 THEN '{OPEN}' ELSE {CONVERSATION}.status END,
        status_changed_at = CASE
            WHEN excluded.unread > 0 AND {CONVERSATION}.status <> '{OPEN}'
            THEN excluded.created_at ELSE {CONVERSATION}.status_changed_at END,
        last_message_at = CASE
            WHEN {CONVERSATION}.last_message_at IS NULL
                OR excluded.last_message_at > {CONVERSATION}.last_message_at
            THEN excluded.last_message_at ELSE {CONVERSATION}.last_message_at END,
        last_inbound_at = CASE
            WHEN excluded.last_inbound_at IS NULL THEN {CONVERSATION}.last_inbound_at
            WHEN {CONVERSATION}.last_inbound_at IS NULL
                OR excluded.last_inbound_at > {CONVERSATION}.last_inbound_at
            THEN excluded.last_inbound_at ELSE {CONVERSATION}.last_inbound_at END
    RETURNING {{columns}}, status_changed_at = %s
"""  # noqa: S608
# The fields of the columns both conversation inserts name, in their order.
INSERTED_CONVERSATION = (
    "uuid", "organization", "contact", "number", "status", "labels", "unread", "messages",
    "last_message_at", "last_inbound_at", "status_changed_at", "created_at",
)  # fmt: skip


def conversation_rows(values: list[tuple]) -> Statement:
    """Rows of INSERTED_CONVERSATION's columns, as rows_of gives them."""
    return rows_of(column_types(Conversation, INSERTED_CONVERSATION), values)


@dataclass(frozen=True)
class Offered:
    """What one pair's chats of a batch bring to its conversation."""

    contact_id: int
    number_id: int
    unread: int  # new inbound messages
    messages: int  # chats of the batch
    last_message_at: datetime
    last_inbound_at: datetime | None


@dataclass(frozen=True)
class Upserted:
    conversation: Conversation
    created: bool
    reopened: bool


def upsert_conversations(organization_id: int, offered: list[Offered]) -> list[Upserted]:
    """UPSERT_CONVERSATIONS for `offered` (in the order given: the rows are locked in
    it), each conversation as it is after the statement."""
    now = timezone.now()
    fields = {f.attname: f for f in Conversation._meta.concrete_fields}
    db = rows.wrapper(connection)

    def prepared(name: str, value):
        return fields[name].get_db_prep_value(value, db, prepared=False)

    proposed = {}
    values = []
    for pair in offered:
        new_uuid = uuid.uuid4()
        proposed[(pair.contact_id, pair.number_id)] = prepared("uuid", new_uuid)
        values.append(
            (
                proposed[(pair.contact_id, pair.number_id)],
                organization_id,
                pair.contact_id,
                pair.number_id,
                OPEN,
                prepared("labels", []),
                pair.unread,
                pair.messages,
                prepared("last_message_at", pair.last_message_at),
                prepared("last_inbound_at", pair.last_inbound_at),
                prepared("status_changed_at", now),
                prepared("created_at", now),
            )
        )
    source, rows_params = conversation_rows(values)
    params = [*rows_params, prepared("status_changed_at", now)]
    sql = UPSERT_CONVERSATIONS.format(
        rows=source,
        columns=", ".join(cast(str, f.column) for f in Conversation._meta.concrete_fields),
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        returned = cursor.fetchall()
    upserted = []
    for row in returned:
        conversation = rows.instance(Conversation, connection, row[:-1])
        created = (
            prepared("uuid", conversation.uuid)
            == proposed[(conversation.contact_id, conversation.number_id)]
        )
        upserted.append(Upserted(conversation, created, bool(row[-1]) and not created))
    return upserted


# A send's conversations: found without locking those that exist, the missing made
# (another transaction making the same pair first wins; its row is read after), and
# each existing one's time and count of messages moved by MOVE_CONVERSATION at the end
# of the recording transaction (events.services.at_batch_end), so that sends to one
# contact hold its row for their commit only, not for their whole transaction.
CONVERSATION_COLUMNS = ", ".join(
    f"{CONVERSATION}.{f.column}" for f in Conversation._meta.concrete_fields
)
FIND_CONVERSATIONS = f"""
    SELECT {CONVERSATION_COLUMNS} FROM {CONVERSATION}
    WHERE organization_id = %s AND (contact_id, number_id) IN ({{pairs}})
"""  # noqa: S608
CREATE_CONVERSATIONS = f"""
    INSERT INTO {CONVERSATION}
        (uuid, organization_id, contact_id, number_id, status, labels, unread, messages,
         last_message_at, last_inbound_at, status_changed_at, created_at)
    {{rows}}
    ON CONFLICT (contact_id, number_id) DO NOTHING
    RETURNING {{columns}}
"""  # noqa: S608
MOVE_CONVERSATION = f"""
    UPDATE {CONVERSATION} SET messages = messages + %s,
        last_message_at = CASE WHEN last_message_at IS NULL OR last_message_at < %s
            THEN %s ELSE last_message_at END
    WHERE id = %s
"""  # noqa: S608


def find_conversations(
    organization_id: int, pairs: list[tuple[int, int]]
) -> dict[tuple[int, int], Conversation]:
    """The existing conversations of (contact, number) `pairs`, unlocked."""
    source, pair_params = rows_of(column_types(Conversation, ("contact", "number")), pairs)
    sql = FIND_CONVERSATIONS.format(pairs=source)
    params = [organization_id, *pair_params]
    db = rows.wrapper(connection)
    with db.cursor() as cursor:
        cursor.execute(sql, params)
        found = [rows.instance(Conversation, db, row) for row in cursor.fetchall()]
    return {(c.contact_id, c.number_id): c for c in found}


def create_conversations(
    organization_id: int, started: dict[tuple[int, int], tuple[datetime, int]]
) -> list[Conversation]:
    """Conversations for the pairs of `started` (each with its latest message's time and
    its count of messages), in pair order; those another transaction made first are not
    returned."""
    now = timezone.now()
    fields = {f.attname: f for f in Conversation._meta.concrete_fields}
    db = rows.wrapper(connection)

    def prepared(name: str, value):
        return fields[name].get_db_prep_value(value, db, prepared=False)

    values = [
        (
            prepared("uuid", uuid.uuid4()),
            organization_id,
            contact_id,
            number_id,
            OPEN,
            prepared("labels", []),
            0,
            messages,
            prepared("last_message_at", at),
            None,
            prepared("status_changed_at", now),
            prepared("created_at", now),
        )
        for (contact_id, number_id), (at, messages) in sorted(started.items())
    ]
    source, params = conversation_rows(values)
    sql = CREATE_CONVERSATIONS.format(
        rows=source,
        columns=", ".join(cast(str, f.column) for f in Conversation._meta.concrete_fields),
    )
    with db.cursor() as cursor:
        cursor.execute(sql, params)
        return [rows.instance(Conversation, db, row) for row in cursor.fetchall()]


def move_conversation_statement(
    conversation_id: int, at: datetime, messages: int
) -> tuple[str, list]:
    """The statement that adds `messages` to a conversation's count and moves its last
    message time to `at`, if later."""
    value = Conversation._meta.get_field("last_message_at").get_db_prep_value(
        at, connection, prepared=False
    )
    return MOVE_CONVERSATION, [messages, value, value, conversation_id]


# Locks on message ids for the rest of the transaction: the ORM has no advisory locks.
HOLD_MESSAGE_IDS = "SELECT pg_advisory_xact_lock(key) FROM unnest(%s::bigint[]) AS key ORDER BY key"


def hold_message_ids(organization_id: int, wam_ids) -> None:
    """Transaction-scoped PostgreSQL advisory locks on these message ids of an organization,
    taken in one order so that two holders cannot deadlock. SQLite needs none: a write
    transaction there holds the whole database."""
    fetch_together(holding(organization_id, wam_ids))


def holding(organization_id: int, wam_ids) -> list[Statement]:
    """The statement of hold_message_ids, for a round trip with others (none on SQLite)."""
    if connection.vendor != "postgresql" or not wam_ids:
        return []
    keys = sorted({message_lock_key(organization_id, wam_id) for wam_id in wam_ids})
    return [(HOLD_MESSAGE_IDS, [keys])]


def message_lock_key(organization_id: int, wam_id: str) -> int:
    digest = hashlib.blake2b(f"{organization_id}:{wam_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


# Whether statuses were kept aside for a message id: every send asks as it records its
# chat, and nearly always none were.
# Earns 17% of the worker's CPU per auto-reply (9% of POST /api/send) over .exists(),
# measured in-process on PostgreSQL.
ANY_KEPT = (
    f"SELECT 1 FROM {ChatStatusEvent._meta.db_table} "  # noqa: S608
    "WHERE organization_id = %s AND wam_id = %s AND chat_id IS NULL LIMIT 1"
)


def any_kept(organization_id: int, wam_id: str) -> bool:
    """ANY_KEPT: whether statuses wait for this message's chat."""
    with connection.cursor() as cursor:
        cursor.execute(ANY_KEPT, [organization_id, wam_id])
        return cursor.fetchone() is not None


# A status webhook's work, in two round trips whatever the number of its statuses (each
# a statement the ORM would compile for longer than PostgreSQL runs it): the message ids
# held and, holding them, their chats (with contact and number, as the event shows them)
# and the statuses stored before; then the new statuses inserted and the chats moved.
# The message.status.update events are built from these rows, with no read of their own.
# Earns half the web process's CPU per one-status webhook (8.3 ms against 16 to 19 on a
# loaded machine) over the ORM's eight round trips, measured in-process on PostgreSQL.
STATUS_CHATS = f"""
    SELECT {rows.columns(Chat, "t")}, {rows.columns(Contact, "k")}, {rows.columns(Number, "c")}
    FROM {Chat._meta.db_table} t
    JOIN {Contact._meta.db_table} k ON k.id = t.contact_id
    JOIN {Number._meta.db_table} c ON c.id = t.number_id
    WHERE t.organization_id = %s AND {{ids}}
"""  # noqa: S608
STORED_STATUSES = f"""
    SELECT {rows.columns(ChatStatusEvent, "e")} FROM {ChatStatusEvent._meta.db_table} e
    WHERE e.organization_id = %s AND {{ids}} ORDER BY e.timestamp, e.id
"""  # noqa: S608
STATUS_COLUMNS = [field for field in ChatStatusEvent._meta.concrete_fields if not field.primary_key]
STATUS_FIELDS = tuple(field.name for field in STATUS_COLUMNS)
INSERT_STATUSES = (
    f"INSERT INTO {ChatStatusEvent._meta.db_table} "  # noqa: S608
    f"({', '.join(cast(str, field.column) for field in STATUS_COLUMNS)}) {{rows}} "
    "ON CONFLICT DO NOTHING"
)
# A chat moved forward only from a lower status; failed whenever it comes, with its error.
# Each keeps the status the figures counted (sending.models.UNCOUNTED).
KEEP_COUNTED = "counted_status = COALESCE(counted_status, status)"
MOVE_CHATS = (
    f"UPDATE {Chat._meta.db_table} SET {KEEP_COUNTED}, status = %s "  # noqa: S608
    "WHERE {ids} AND {lower} RETURNING id"
)
FAIL_CHAT = (
    f"UPDATE {Chat._meta.db_table} SET {KEEP_COUNTED}, status = %s, error_code = %s, "  # noqa: S608
    "error_title = %s, error_details = %s WHERE id = %s RETURNING id"
)

RECOUNT_CHATS = (
    f"UPDATE {Chat._meta.db_table} SET {KEEP_COUNTED} "  # noqa: S608
    "WHERE {ids} AND counted_status IS NULL"
)


def held_statuses(
    organization_id: int, wam_ids: set[str]
) -> tuple[dict[str, Chat], list[ChatStatusEvent]]:
    """The message ids held (hold_message_ids), then their chats by message id (each with
    its contact and number) and the status events stored for them, oldest first: read
    after the locks, so that a send recording one of the chats meanwhile is seen."""
    ids = sorted(wam_ids)
    chats_named, chat_ids = among("t.wam_id", ids)
    events_named, event_ids = among("e.wam_id", ids)
    statements = holding(organization_id, ids) + [
        (STATUS_CHATS.format(ids=chats_named), [organization_id, *chat_ids]),
        (STORED_STATUSES.format(ids=events_named), [organization_id, *event_ids]),
    ]
    *_, chat_rows, event_rows = fetch_together(statements)
    db = rows.wrapper(connection)
    chats = {}
    for row in chat_rows:
        chat_row, contact_row, number_row = rows.split(row, Chat, Contact, Number)
        chat = rows.instance(Chat, db, chat_row)
        Chat.contact.field.set_cached_value(chat, rows.instance(Contact, db, contact_row))
        Chat.number.field.set_cached_value(chat, rows.instance(Number, db, number_row))
        chats[cast(str, chat.wam_id)] = chat
    events = [rows.instance(ChatStatusEvent, db, row) for row in event_rows]
    return chats, events


def insert_statuses(events: list[ChatStatusEvent]) -> Statement:
    """The statement that inserts these status events (a concurrent delivery's copy of
    one is kept once, by the unique constraint)."""
    now = timezone.now()
    db = rows.wrapper(connection)
    values = []
    for event in events:
        event.received_at = event.received_at or now  # a queued status's own time
        values.append(
            [field.get_db_prep_save(getattr(event, field.attname), db) for field in STATUS_COLUMNS]
        )
    source, params = rows_of(column_types(ChatStatusEvent, STATUS_FIELDS), values)
    return INSERT_STATUSES.format(rows=source), params


def move_chats(
    inserted: list[ChatStatusEvent],
    forward: dict[str, tuple[list[int], list[str]]],
    failed: list[ChatStatusEvent],
    *,
    recount: list[int] | None = None,
) -> set[int]:
    """In one round trip: `inserted` status events written, the chats of `forward` (by
    status: the chats' ids and the statuses they may move from) moved, the chats of
    `failed` (events with their chat and error) failed, and the chats of `recount` left
    where they are but to be counted again by the figures. The ids of the chats that
    moved: each UPDATE locks its rows, so a concurrent delivery moving the same chat
    waits, then no longer finds it in a lower status, and each move is reported once."""
    details = ChatStatusEvent._meta.get_field("error_details")
    statements: list[Statement] = [insert_statuses(inserted)] if inserted else []
    for event in failed:
        error = details.get_db_prep_save(event.error_details, connection)
        params = [ChatStatus.FAILED.value, event.error_code, event.error_title, error]
        statements.append((FAIL_CHAT, [*params, event.chat_id]))
    for status, (chat_ids, lower) in forward.items():
        (ids, id_params), (lower_sql, lower_params) = among("id", chat_ids), among("status", lower)
        sql = MOVE_CHATS.format(ids=ids, lower=lower_sql)
        statements.append((sql, [status, *id_params, *lower_params]))
    if recount:
        ids, id_params = among("id", recount)
        statements.append((RECOUNT_CHATS.format(ids=ids), id_params))
    results = fetch_together(statements)
    return {row[0] for result in results for row in result}
