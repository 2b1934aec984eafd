"""The inbox's hand-written SQL: each organization's count of conversations, the
unfiltered list's page, and a conversation's page of messages.

The count is kept by an upsert that adds to it in the transaction that creates
conversations, written at the end of the event batch (events.services.at_batch_end) so
that its row is locked for the commit only; read in one indexed look-up, a count where
the row is missing. A COUNT(*) of 100,000 conversations cost the list's first page more
than the rest of it. The page is written out for the same reason: the ORM's compiling of
its joins cost more than running it."""

import uuid
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection

from business_numbers.models import Number
from contacts.models import Contact
from events.services import at_batch_end
from inbox.models import ConversationTotal
from messaging_project.core import rows
from sending.models import Chat, ChatMedia, Conversation

CHAT = Chat._meta.db_table
TOTAL = ConversationTotal._meta.db_table
CONVERSATION = Conversation._meta.db_table

ADD_SQL = f"""
    INSERT INTO {TOTAL} (organization_id, conversations) VALUES (%s, %s)
    ON CONFLICT (organization_id) DO UPDATE
    SET conversations = {TOTAL}.conversations + excluded.conversations
"""  # noqa: S608

TOTAL_SQL = f"""
    SELECT COALESCE(
        (SELECT conversations FROM {TOTAL} WHERE organization_id = %s),
        (SELECT COUNT(*) FROM {CONVERSATION} WHERE organization_id = %s)
    )
"""  # noqa: S608

RECOUNT_SQL = f"""
    INSERT INTO {TOTAL} (organization_id, conversations)
    SELECT %s, COUNT(*) FROM {CONVERSATION} WHERE organization_id = %s
    ON CONFLICT (organization_id) DO UPDATE SET conversations = excluded.conversations
"""  # noqa: S608


CHANGED_SQL = f"""
    UPDATE {TOTAL} SET changes = changes + 1 WHERE organization_id = %s
"""  # noqa: S608


def note_change(organization_id: int) -> None:
    """One more change of a conversation's state by staff or the API. An organization
    without its row yet (conversations from before the count was kept) is counted once."""
    with connection.cursor() as cursor:
        cursor.execute(CHANGED_SQL, [organization_id])
        if cursor.rowcount == 0:
            cursor.execute(RECOUNT_SQL, [organization_id, organization_id])
            cursor.execute(CHANGED_SQL, [organization_id])


def add_conversations(organization_id: int, created: int) -> None:
    """`created` more conversations, as the current batch ends (now outside one)."""
    at_batch_end(ADD_SQL, [organization_id, created])


def conversation_total(organization_id: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute(TOTAL_SQL, [organization_id, organization_id])
        return int(cursor.fetchone()[0])


def recount_conversations(organization_id: int) -> None:
    """The count written from the rows (conversations written by hand: the benchmark's)."""
    with connection.cursor() as cursor:
        cursor.execute(RECOUNT_SQL, [organization_id, organization_id])


# One page of an organization's conversations, newest message first, each with its
# contact, its number's uuid and its assignee's username; the organization's total on
# every row. Read through the index (organization, last_message_at DESC, id DESC). The
# number's uuid and the assignee's name are subqueries, not joins: planning two joins
# more cost PostgreSQL twice what it then took to run the statement.
PAGE_SQL = f"""
    SELECT {{conversation}}, {{contact}},
        (SELECT number.uuid FROM {Number._meta.db_table} number
          WHERE number.id = conversation.number_id),
        (SELECT assignee.username FROM {{users}} assignee
          WHERE assignee.id = conversation.assignee_id),
        ({{total}})
    FROM {CONVERSATION} conversation
    JOIN {Contact._meta.db_table} contact ON contact.id = conversation.contact_id
    WHERE conversation.organization_id = %s
    ORDER BY conversation.last_message_at DESC, conversation.id DESC
    LIMIT %s OFFSET %s
"""  # noqa: S608


def conversation_page(
    organization_id: int, offset: int, limit: int
) -> tuple[list[Conversation], int | None]:
    """PAGE_SQL: the page's conversations (contact, number and assignee loaded) and the
    organization's total (None for an empty page: counted apart)."""
    users = get_user_model()
    sql = PAGE_SQL.format(
        conversation=rows.columns(Conversation, "conversation"),
        contact=rows.columns(Contact, "contact"),
        total=TOTAL_SQL.strip(),
        users=users._meta.db_table,
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [organization_id, organization_id, organization_id, limit, offset])
        found = cursor.fetchall()
        db = cursor.db  # the connection itself: each look-up through the proxy costs
    uuid_field = Number._meta.get_field("uuid")
    # A page's conversations share a few numbers and assignees: each made once.
    numbers: dict[int, Number] = {}
    assignees: dict[int | None, Any] = {None: None}
    page = []
    for row in found:
        values, contact_values = rows.split(row, Conversation, Contact)
        conversation = rows.instance(Conversation, db, values)
        rows.related(conversation, "contact", rows.instance(Contact, db, contact_values))
        number_uuid, username = row[-3], row[-2]
        number = numbers.get(conversation.number_id)
        if number is None:
            number = numbers[conversation.number_id] = Number.from_db(
                db.alias,
                ["id", "uuid"],
                [conversation.number_id, uuid_field.to_python(number_uuid)],
            )
        rows.related(conversation, "number", number)
        assignee_id = conversation.assignee_id
        if assignee_id not in assignees:
            assignees[assignee_id] = users.from_db(
                db.alias, ["id", "username"], [assignee_id, username]
            )
        rows.related(conversation, "assignee", assignees.get(assignee_id))
        page.append(conversation)
    return page, (int(found[0][-1]) if found else None)


# A conversation's page of messages is read in two statements instead of the ORM's three
# (the conversation, the page and its COUNT(*)), whose compiling and planning cost more
# than running them. The first finds the conversation in the organization, with its
# contact, its number's uuid and its count of live messages (kept on its row: counting
# a 10,000-message conversation's index entries cost ten times reading its page).
CONVERSATION_MESSAGES_SQL = f"""
    SELECT conversation.id, conversation.number_id,
        (SELECT number.uuid FROM {Number._meta.db_table} number
          WHERE number.id = conversation.number_id),
        {{contact}}, conversation.messages
    FROM {CONVERSATION} conversation
    JOIN {Contact._meta.db_table} contact ON contact.id = conversation.contact_id
    WHERE conversation.organization_id = %s AND conversation.uuid = %s
"""  # noqa: S608

# The second reads the page with its media, the conversation's id written in (a
# parameter the planner does not know could send it down the primary key, through every
# other conversation's messages). As in messaging_project/api/pagination.py, the page's
# first id is found in the index alone, so that a deep page skips index entries, not rows.
# The first page, the one an inbox opens, needs no such id: without it PostgreSQL plans
# and runs the statement in half the time.
MESSAGE_PAGE_SQL = f"""
    SELECT {{chat}}, {{media}}
    FROM {CHAT} chat
    LEFT JOIN {ChatMedia._meta.db_table} media ON media.id = chat.media_id
    WHERE chat.conversation_id = %s AND chat.deleted_at IS NULL{{after}}
    ORDER BY chat.id DESC
    LIMIT %s
"""  # noqa: S608
AFTER_SQL = f"""
      AND chat.id <= (SELECT newest.id FROM {CHAT} newest
                       WHERE newest.conversation_id = %s AND newest.deleted_at IS NULL
                       ORDER BY newest.id DESC LIMIT 1 OFFSET %s)"""  # noqa: S608


def message_page(
    organization_id: int, conversation_uuid: uuid.UUID, offset: int, limit: int
) -> tuple[list[Chat], int] | None:
    """The page's chats (media, contact and number loaded) and the conversation's count
    of live messages; None when the organization has no such conversation. A page past
    the last message is known empty from the count, without reading it."""
    uuid_value = Conversation._meta.get_field("uuid").get_db_prep_value(
        conversation_uuid, connection
    )
    with connection.cursor() as cursor:
        cursor.execute(
            CONVERSATION_MESSAGES_SQL.format(contact=rows.columns(Contact, "contact")),
            [organization_id, uuid_value],
        )
        found = cursor.fetchone()
        if found is None:
            return None
        conversation_id, number_id, number_uuid, *contact_values, total = found
        if offset >= total:
            return [], int(total)
        sql = MESSAGE_PAGE_SQL.format(
            chat=rows.columns(Chat, "chat"),
            media=rows.columns(ChatMedia, "media"),
            after=AFTER_SQL if offset else "",
        )
        after = [conversation_id, offset] if offset else []
        cursor.execute(sql, [conversation_id, *after, limit])
        page_rows = cursor.fetchall()
        db = cursor.db  # the connection itself: each look-up through the proxy costs
    contact = rows.instance(Contact, db, contact_values)
    number_uuid = Number._meta.get_field("uuid").to_python(number_uuid)
    number = Number.from_db(db.alias, ["id", "uuid"], [number_id, number_uuid])
    page = []
    for row in page_rows:
        chat_values, media_values = rows.split(row, Chat, ChatMedia)
        chat = rows.instance(Chat, db, chat_values)
        rows.related(chat, "contact", contact)
        rows.related(chat, "number", number)
        media = rows.instance(ChatMedia, db, media_values) if chat.media_id is not None else None
        rows.related(chat, "media", media)
        page.append(chat)
    return page, int(total)
