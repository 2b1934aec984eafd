"""The inbound app's hand-written SQL: the organization a WhatsApp webhook is for, and
its event endpoints; an auto-reply's claim and load. The statements say what earns them
their place beside the ORM; they run on PostgreSQL in the suite."""

from dataclasses import dataclass

from django.db import connection
from django.utils import timezone

from accounts.models import Organization
from business_numbers.models import NUMBERS_CACHE, Number
from canned_replies.models import CannedReply
from contacts.models import Contact, OptOutWords
from events.models import Endpoint
from inbound.models import QueuedStatuses
from messaging_project.core import rows
from messaging_project.core.database import fetch_together, server_bound_cursor
from sending.models import AutoReply, AutoReplyState, Chat

# The organization a WhatsApp webhook is for, with its live numbers (default first) and
# its opt-out words (LEFT JOINs: no words are STOP and START alone): a row per number.
# Earns 8% of the inbound message webhook's instructions over select_related and a
# query for the numbers, measured in-process on PostgreSQL (bench/account_news.py's
# baseline target).
WEBHOOK_ORGANIZATION = f"""
    SELECT {rows.columns(Organization, "o")}, {rows.columns(Number, "c")},
        {rows.columns(OptOutWords, "w")}
    FROM {Organization._meta.db_table} o
    LEFT JOIN {Number._meta.db_table} c ON c.organization_id = o.id AND c.deleted_at IS NULL
    LEFT JOIN {OptOutWords._meta.db_table} w ON w.organization_id = o.id
    WHERE o.uuid = %s
    ORDER BY c.is_default DESC, c.id
"""  # noqa: S608
# Its active endpoints (events/queries.py's LISTENING_SQL, by the organization's uuid),
# read in the same round trip, so that the webhook's events do not look them up: every
# status and message webhook asks. Earns one round trip of the eight or so of a
# one-status webhook.
WEBHOOK_ENDPOINTS = f"""
    SELECT e.id, e.events, e.format FROM {Endpoint._meta.db_table} e
    JOIN {Organization._meta.db_table} o ON o.id = e.organization_id
    WHERE o.uuid = %s AND e.is_active AND e.deleted_at IS NULL ORDER BY e.id
"""  # noqa: S608


def webhook_organization(organization_uuid) -> tuple[Organization | None, list[tuple]]:
    """The organization of this uuid with its live numbers and opt-out words loaded (as
    numbers_of and select_related would give them), None when none is; and its active
    endpoints as events' listening_rows() gives them (for event_batch)."""
    uuid_field = Organization._meta.get_field("uuid")
    uuid_value = uuid_field.get_db_prep_value(organization_uuid, connection)
    found, endpoints = fetch_together(
        [(WEBHOOK_ORGANIZATION, [uuid_value]), (WEBHOOK_ENDPOINTS, [uuid_value])]
    )
    if not found:
        return None, []
    organization_row, _, words_row = rows.split(found[0], Organization, Number, OptOutWords)
    organization = rows.instance(Organization, connection, organization_row)
    numbers = []
    for row in found:
        number_row = rows.split(row, Organization, Number, OptOutWords)[1]
        if number_row[0] is not None:  # no number yet: a NULL row
            number = rows.instance(Number, connection, number_row)
            Number.organization.field.set_cached_value(number, organization)
            numbers.append(number)
    setattr(organization, NUMBERS_CACHE, numbers)
    # A missing row's id is NULL: the opt-out words see the absence.
    words = None if words_row[0] is None else rows.instance(OptOutWords, connection, words_row)
    Organization.opt_out_words.related.set_cached_value(organization, words)
    if words is not None:
        OptOutWords.organization.field.set_cached_value(words, organization)
    return organization, endpoints


# What a status-only delivery's check needs (inbound/middleware.py): the organization,
# its default number (the Meta app's secret, as stored: sealed) and the phone number
# ids of its live numbers: a row per number with one (one NULL row when none has).
WEBHOOK_SIGNER = f"""
    SELECT o.id, d.id, d.app_secret, n.phone_number_id
    FROM {Organization._meta.db_table} o
    JOIN {Number._meta.db_table} d ON d.organization_id = o.id AND d.is_default
        AND d.deleted_at IS NULL
    LEFT JOIN {Number._meta.db_table} n ON n.organization_id = o.id
        AND n.deleted_at IS NULL AND n.phone_number_id <> ''
    WHERE o.uuid = %s
"""  # noqa: S608


@dataclass(frozen=True)
class Signer:
    """Who signs an organization's webhooks, as last read."""

    organization_id: int
    default_number_id: int
    secret: str
    sealed_secret: str  # the column's value: unchanged while the secret is
    # None of them: every change is the default number's (the sandbox's).
    phone_number_ids: frozenset[str]

    def takes(self, phone_number_id: str) -> bool:
        """Whether a change naming this number is the organization's (number_for)."""
        return not self.phone_number_ids or phone_number_id in self.phone_number_ids


def webhook_signer(organization_uuid) -> Signer | None:
    """The organization's Signer; None when it has no default number, or no organization
    has this uuid."""
    uuid_field = Organization._meta.get_field("uuid")
    uuid_value = uuid_field.get_db_prep_value(organization_uuid, connection)
    with connection.cursor() as cursor:
        cursor.execute(WEBHOOK_SIGNER, [uuid_value])
        found = cursor.fetchall()
    if not found:
        return None
    organization_id, number_id, sealed, _ = found[0]
    secret = Number._meta.get_field("app_secret").from_db_value(sealed, None, connection)
    ids = frozenset(row[3] for row in found if row[3] is not None)
    return Signer(organization_id, number_id, secret or "", sealed or "", ids)


# A status-only delivery queued, in the statement that checks that the Signer it was
# checked against is still true: the default number and its secret unchanged, and the
# number the delivery names still the organization's (or, for an organization whose
# numbers have no phone number id, still none has). Nothing is inserted otherwise.
QUEUE_IF_SIGNED = f"""
    INSERT INTO {QueuedStatuses._meta.db_table} (organization_id, changes, received_at, error)
    SELECT %s, %s, %s, ''
    WHERE EXISTS (
        SELECT 1 FROM {Number._meta.db_table} d
        WHERE d.id = %s AND d.is_default AND d.deleted_at IS NULL AND d.app_secret = %s
    ) AND {{named}} (
        SELECT 1 FROM {Number._meta.db_table} n
        WHERE n.organization_id = %s AND n.deleted_at IS NULL AND n.phone_number_id {{number}}
    )
"""  # noqa: S608
QUEUE_IF_NAMED = QUEUE_IF_SIGNED.format(named="EXISTS", number="= %s")
QUEUE_IF_NONE_NAMED = QUEUE_IF_SIGNED.format(named="NOT EXISTS", number="<> ''")


def queue_if_signed(signer: Signer, phone_number_id: str, changes: list[dict]) -> bool:
    """Queue the changes for the workers (one autocommitted insert) if `signer` is still
    the organization's, and `phone_number_id` still one of its numbers' (Signer.takes)."""
    changes_value = QueuedStatuses._meta.get_field("changes").get_db_prep_save(changes, connection)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    params = [
        signer.organization_id,
        changes_value,
        now,
        signer.default_number_id,
        signer.sealed_secret,
        signer.organization_id,
    ]
    if signer.phone_number_ids:
        statement, params = QUEUE_IF_NAMED, [*params, phone_number_id]
    else:
        statement = QUEUE_IF_NONE_NAMED
    # Bound by PostgreSQL: quoting the JSON in Python cost 6% of the webhook's CPU.
    with server_bound_cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.rowcount == 1


# The run that claimed a reply records its end even if another run marked it unknown
# meanwhile (a worker thought dead that was only slow): it knows what happened.
OWNED = [AutoReplyState.SENDING, AutoReplyState.UNKNOWN]


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
