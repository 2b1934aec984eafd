"""The inbound app's hand-written SQL: the organization a WhatsApp webhook is for. The
statement says what earns it its place beside the ORM; it runs on PostgreSQL in the
suite."""

from django.db import connection

from accounts.models import Organization
from business_numbers.models import NUMBERS_CACHE, Number
from contacts.models import OptOutWords
from messaging_project.core import rows

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


def webhook_organization(organization_uuid) -> Organization | None:
    """The organization of this uuid with its live numbers and opt-out words loaded (as
    numbers_of and select_related would give them); None when none is."""
    uuid_field = Organization._meta.get_field("uuid")
    with connection.cursor() as cursor:
        cursor.execute(
            WEBHOOK_ORGANIZATION, [uuid_field.get_db_prep_value(organization_uuid, connection)]
        )
        found = cursor.fetchall()
    if not found:
        return None
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
    return organization
