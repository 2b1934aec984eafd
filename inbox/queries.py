"""The inbox's hand-written SQL: each organization's count of conversations, and the
unfiltered list's page.

The count is kept by an upsert that adds to it in the transaction that creates
conversations, written at the end of the event batch (events.services.at_batch_end) so
that its row is locked for the commit only; read in one indexed look-up, a count where
the row is missing. A COUNT(*) of 100,000 conversations cost the list's first page more
than the rest of it. The page is written out for the same reason: the ORM's compiling of
its joins cost more than running it."""

from django.contrib.auth import get_user_model
from django.db import connection

from business_numbers.models import Number
from contacts.models import Contact
from events.services import at_batch_end
from inbox.models import ConversationTotal
from messaging_project.core import rows
from sending.models import Conversation

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
# every row. Read through the index (organization, last_message_at DESC, id DESC).
PAGE_SQL = f"""
    SELECT {{conversation}}, {{contact}}, number.uuid, assignee.username, ({{total}})
    FROM {CONVERSATION} conversation
    JOIN {Contact._meta.db_table} contact ON contact.id = conversation.contact_id
    JOIN {Number._meta.db_table} number ON number.id = conversation.number_id
    LEFT JOIN {{users}} assignee ON assignee.id = conversation.assignee_id
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
    uuid_field = Number._meta.get_field("uuid")
    page = []
    for row in found:
        values, contact_values = rows.split(row, Conversation, Contact)
        conversation = rows.instance(Conversation, connection, values)
        conversation.contact = rows.instance(Contact, connection, contact_values)
        number_uuid, username = row[-3], row[-2]
        conversation.number = Number.from_db(
            connection.alias,
            ["id", "uuid"],
            [conversation.number_id, uuid_field.to_python(number_uuid)],
        )
        conversation.assignee = (
            users.from_db(
                connection.alias, ["id", "username"], [conversation.assignee_id, username]
            )
            if conversation.assignee_id is not None
            else None
        )
        page.append(conversation)
    return page, (int(found[0][-1]) if found else None)
