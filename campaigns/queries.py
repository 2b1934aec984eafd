"""Campaigns' hand-written SQL: the claim of a batch of recipients, their outcomes
recorded together, and a number's turns taken in one statement on PostgreSQL. Each statement says
what earns it its place beside the ORM; every one runs on PostgreSQL in the suite
(tests/campaigns/test_postgres.py)."""

from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

from campaigns.models import Campaign, CampaignStatus, Recipient, RecipientStatus, SendPace
from messaging_project.core.database import among, column_types, rows_of


def claim_recipients(*, campaign_id: int, worker_id: str, size: int) -> list[Recipient]:
    """Up to `size` pending recipients, in order, marked `sending` for `worker_id`, only
    while the campaign runs: one UPDATE ... RETURNING, which the ORM cannot write. The
    rows are picked with SKIP LOCKED on PostgreSQL (another sender's claim in progress is
    passed over); SQLite's writes are serialised anyway."""
    recipients = connection.ops.quote_name(Recipient._meta.db_table)
    campaigns = connection.ops.quote_name(Campaign._meta.db_table)
    lock = " FOR UPDATE SKIP LOCKED" if connection.vendor == "postgresql" else ""
    claimed = Recipient.objects.raw(
        # Materialized: as a plain subquery PostgreSQL may run the LIMIT more than once.
        f"WITH picked AS MATERIALIZED (SELECT id FROM {recipients} "
        f"WHERE campaign_id = %s AND status = %s ORDER BY id LIMIT %s{lock}) "
        f"UPDATE {recipients} SET status = %s, claimed_by = %s, claimed_at = %s, "
        f"attempts = attempts + 1 "
        f"WHERE id IN (SELECT id FROM picked) AND status = %s "
        f"AND EXISTS (SELECT 1 FROM {campaigns} WHERE id = %s AND status = %s) "
        f"RETURNING *",
        [
            campaign_id,
            RecipientStatus.PENDING,
            size,
            RecipientStatus.SENDING,
            worker_id[:255],
            timezone.now(),
            RecipientStatus.PENDING,
            campaign_id,
            CampaignStatus.RUNNING,
        ],
    )
    return sorted(claimed, key=lambda recipient: recipient.pk)


def mark_sent(
    *, claimed_at: datetime | None, sent: list[tuple[int, int | None, int | None]]
) -> int:
    """Recipients `sent`, each with its chat and contact (`sent`: (recipient id, chat
    id, contact id) of one batch, whose claims share `claimed_at`), in one UPDATE ...
    FROM VALUES: the ORM's bulk_update builds a CASE per row and field, and spent more of
    a fast campaign's worker than all its other statements. Conditional on each claim
    still being this one (or marked unknown meanwhile by a sender that thought this
    worker dead: the owner knows better). How many were updated."""
    if not sent:
        return 0
    table = connection.ops.quote_name(Recipient._meta.db_table)
    rows, values = rows_of(column_types(Recipient, ("id", "chat", "contact")), sent)
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH answered (id, chat_id, contact_id) AS ({rows}) "
            f"UPDATE {table} SET status = %s, error = '', "
            f"chat_id = answered.chat_id, contact_id = answered.contact_id "
            f"FROM answered WHERE {table}.id = answered.id "
            f"AND {table}.status IN (%s, %s) AND {table}.claimed_at = %s",
            [
                *values,
                RecipientStatus.SENT,
                RecipientStatus.SENDING,
                RecipientStatus.UNKNOWN,
                connection.ops.adapt_datetimefield_value(claimed_at),
            ],
        )
        return cursor.rowcount


def advance_pace(*, number_id: int, span: timedelta, lead: timedelta) -> datetime | None:
    """PostgreSQL only: the number's `next_at` moved `span` past the later of itself and
    `lead` after the database's clock; the moment it moved from (the first turn), or None
    when the number has no row. One UPDATE ... RETURNING, so the row is held for one
    statement, not across round trips; and `clock_timestamp()` is read once the row is
    held (a sender that waited for it is not given a moment already past)."""
    table = connection.ops.quote_name(SendPace._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET next_at = "
            f"GREATEST(next_at, clock_timestamp() + %s * interval '1 microsecond') "
            f"+ %s * interval '1 microsecond' WHERE number_id = %s RETURNING next_at",
            [lead // timedelta(microseconds=1), span // timedelta(microseconds=1), number_id],
        )
        row = cursor.fetchone()
    return row[0] - span if row else None


# The recipients that statuses of recorded chats name and that are still `unknown` (a
# worker died between recording the chat and marking them sent): every status of every
# campaign message asks, nearly always to find none, in the round trip that holds their
# callback data (campaigns/settlement.py). Earns a quarter of the web process's CPU per
# campaign status webhook over the ORM and a round trip of its own, measured in-process
# on PostgreSQL.
UNKNOWN_NAMED = (
    f"SELECT r.id FROM {Recipient._meta.db_table} r "  # noqa: S608
    f"JOIN {Campaign._meta.db_table} c ON c.id = r.campaign_id "
    "WHERE {ids} AND r.status = %s AND c.organization_id = %s"
)


def unknown_named(organization_id: int, recipient_ids) -> tuple[str, list]:
    """UNKNOWN_NAMED as a statement, for read_holding_callback_data."""
    named, ids = among("r.id", sorted(recipient_ids))
    return UNKNOWN_NAMED.format(ids=named), [*ids, RecipientStatus.UNKNOWN.value, organization_id]
