"""The inbound app's hand-written SQL: the organization a WhatsApp webhook is for, and
its event endpoints. The statements say what earns them their place beside the ORM; they
run on PostgreSQL in the suite."""

from django.db import connection

from accounts.models import Organization
from business_numbers.models import NUMBERS_CACHE, Number
from contacts.models import OptOutWords
from events.models import Endpoint
from messaging_project.core import rows
from messaging_project.core.database import fetch_together

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
