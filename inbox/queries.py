"""The inbox's hand-written SQL: each organization's count of conversations. Kept by an
upsert that adds to it in the transaction that creates conversations, written at the
end of the event batch (events.services.at_batch_end) so that its row is locked for the
commit only; read in one indexed look-up, a count where the row is missing. A COUNT(*)
of 100,000 conversations cost the list's first page more than the rest of it."""

from django.db import connection

from events.services import at_batch_end
from inbox.models import ConversationTotal
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
