"""Sending's hand-written SQL: the auto-replies' claim and load, the statuses kept
aside for a chat not yet recorded, and the locks on message ids. Each statement says
what earns it its place beside the ORM; every one runs on PostgreSQL in the suite."""

import hashlib

from django.db import connection
from django.utils import timezone

from accounts.models import Organization
from business_numbers.models import Number
from canned_replies.models import CannedReply
from contacts.models import Contact
from messaging_project.core import rows
from sending.models import AutoReply, AutoReplyState, Chat, ChatStatusEvent

# The run that claimed a reply records its end even if another run marked it unknown
# meanwhile (a worker thought dead that was only slow): it knows what happened.
OWNED = [AutoReplyState.SENDING, AutoReplyState.UNKNOWN]


# Locks on message ids for the rest of the transaction: the ORM has no advisory locks.
HOLD_MESSAGE_IDS = "SELECT pg_advisory_xact_lock(key) FROM unnest(%s::bigint[]) AS key ORDER BY key"


def hold_message_ids(organization_id: int, wam_ids) -> None:
    """Transaction-scoped PostgreSQL advisory locks on these message ids of an organization,
    taken in one order so that two holders cannot deadlock. SQLite needs none: a write
    transaction there holds the whole database."""
    if connection.vendor != "postgresql" or not wam_ids:
        return
    keys = sorted({message_lock_key(organization_id, wam_id) for wam_id in wam_ids})
    with connection.cursor() as cursor:
        cursor.execute(HOLD_MESSAGE_IDS, [keys])


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


# The claim of a reply's first run: its AutoReply written `sending`, unless a row for the
# inbound chat exists (the unique constraint); its organization and the moment it was
# owed are the inbound chat's, and a canned reply deleted since is no longer named.
# (SQLite needs the SELECT's WHERE to read ON CONFLICT as the INSERT's.)
# Earns 35% of the worker's CPU per auto-reply over the ORM (an insert whose duplicate
# is an IntegrityError in a savepoint), measured in-process on PostgreSQL.
WRITE_CLAIM = f"""
    INSERT INTO {AutoReply._meta.db_table}
        (organization_id, inbound_id, canned_reply_id, message, media_type, state, attempts,
         last_error, created_at, updated_at)
    SELECT chat.organization_id, chat.id,
        (SELECT reply.id FROM {CannedReply._meta.db_table} reply WHERE reply.id = %s),
        %s, %s, '{AutoReplyState.SENDING.value}', 1, '', chat.created_at, %s
    FROM {Chat._meta.db_table} chat WHERE chat.id = %s
    ON CONFLICT (inbound_id) DO NOTHING
    RETURNING id
"""  # noqa: S608


def write_claim(owed: dict) -> int | None:
    """The id of the AutoReply this run wrote, claimed; None when there was one already
    (or the inbound chat is gone)."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(
            WRITE_CLAIM,
            [owed["canned_reply"], owed["message"], owed["media_type"], now, owed["inbound"]],
        )
        row = cursor.fetchone()
    return row[0] if row else None


# The claimed reply with what its send needs, in one statement: its organization with
# the channel's settings (Number.of; none for a sandbox organization) and the inbound
# message's sender.
# Earns 33% of the worker's CPU per auto-reply over select_related, measured
# in-process on PostgreSQL.
CLAIMED_REPLY = f"""
    SELECT {rows.columns(AutoReply, "r")}, {rows.columns(Organization, "o")},
        {rows.columns(Contact, "k")}, {rows.columns(Number, "c")}
    FROM {AutoReply._meta.db_table} r
    JOIN {Organization._meta.db_table} o ON o.id = r.organization_id
    JOIN {Chat._meta.db_table} i ON i.id = r.inbound_id
    JOIN {Contact._meta.db_table} k ON k.id = i.contact_id
    JOIN {Number._meta.db_table} c ON c.id = i.number_id
    WHERE r.id = %s
"""  # noqa: S608


def claimed_reply(auto_reply_id: int) -> tuple[AutoReply, Contact, Number]:
    """The reply this run claimed (its organization loaded), its recipient, and the
    number it goes from."""
    with connection.cursor() as cursor:
        cursor.execute(CLAIMED_REPLY, [auto_reply_id])
        row = cursor.fetchone()
    if row is None:  # the inbound chat was deleted meanwhile, and its reply with it
        raise AutoReply.DoesNotExist(f"auto-reply {auto_reply_id}")
    reply_row, organization_row, contact_row, number_row = rows.split(
        row, AutoReply, Organization, Contact, Number
    )
    auto_reply = rows.instance(AutoReply, connection, reply_row)
    organization = rows.instance(Organization, connection, organization_row)
    contact = rows.instance(Contact, connection, contact_row)
    number = rows.instance(Number, connection, number_row)
    Number.organization.field.set_cached_value(number, organization)
    AutoReply.organization.field.set_cached_value(auto_reply, organization)
    return auto_reply, contact, number
