"""Campaigns' hand-written SQL: the claim of a batch of recipients. Each statement says
what earns it its place beside the ORM; every one runs on PostgreSQL in the suite
(tests/campaigns/test_postgres.py)."""

from django.db import connection
from django.utils import timezone

from campaigns.models import Campaign, CampaignStatus, Recipient, RecipientStatus


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


# The recipients that statuses of recorded chats name and that are still `unknown` (a
# worker died between recording the chat and marking them sent): every status of every
# campaign message asks, nearly always to find none, in the round trip that holds their
# callback data (campaigns/settlement.py). Earns a quarter of the web process's CPU per
# campaign status webhook over the ORM and a round trip of its own, measured in-process
# on PostgreSQL.
UNKNOWN_NAMED = (
    f"SELECT r.id FROM {Recipient._meta.db_table} r "  # noqa: S608
    f"JOIN {Campaign._meta.db_table} c ON c.id = r.campaign_id "
    "WHERE r.id IN ({ids}) AND r.status = %s AND c.organization_id = %s"
)


def unknown_named(organization_id: int, recipient_ids) -> tuple[str, list]:
    """UNKNOWN_NAMED as a statement, for read_holding_callback_data."""
    ids = sorted(recipient_ids)
    sql = UNKNOWN_NAMED.format(ids=", ".join(["%s"] * len(ids)))
    return sql, [*ids, RecipientStatus.UNKNOWN.value, organization_id]


# The answered sends' recipients `sent`, each following its chat, in one UPDATE ... FROM
# VALUES, conditional on each claim still being the sender's (or marked unknown by one
# that thought it dead): bulk_update's CASE of every row for every column cost the
# campaign sender half its CPU (cProfile in-process on PostgreSQL, loaded machine).
MARK_SENT = (
    "UPDATE {table} SET status = %s, error = '', chat_id = v.column2, contact_id = v.column3 "
    "FROM (VALUES {rows}) AS v "
    "WHERE {table}.id = v.column1 AND {table}.status IN (%s, %s) AND {table}.claimed_at = %s"
)


def mark_sent(recipients: list[Recipient], claimed_at) -> None:
    """These recipients of one claim `sent`, with the chat and contact each has now."""
    if not recipients:
        return
    params: list = [RecipientStatus.SENT.value]
    for recipient in recipients:
        params += [recipient.pk, recipient.chat_id, recipient.contact_id]
    params += [
        RecipientStatus.SENDING.value,
        RecipientStatus.UNKNOWN.value,
        connection.ops.adapt_datetimefield_value(claimed_at),
    ]
    sql = MARK_SENT.format(
        table=connection.ops.quote_name(Recipient._meta.db_table),
        rows=", ".join(["(%s, %s, %s)"] * len(recipients)),
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
