"""Accounts' hand-written SQL: the bearer token's look-up, which every API request makes.
Each statement says what earns it its place beside the ORM; every one runs on PostgreSQL
in the suite (tests/accounts/)."""

import functools

from django.db import DEFAULT_DB_ALIAS, connections

from accounts.models import ApiToken, Organization
from messaging_project.core import rows


# The unrevoked token with this prefix and its organization, in one statement: written
# out, as compiling the ORM's select_related cost more than running it (1.6 against
# about 0.4 ms of CPU, in-process on PostgreSQL), on every request.
@functools.cache
def active_token_sql() -> str:
    return (
        f"SELECT {rows.columns(ApiToken, 't')}, {rows.columns(Organization, 'o')} "  # noqa: S608
        f"FROM {ApiToken._meta.db_table} t "
        f"JOIN {Organization._meta.db_table} o ON o.id = t.organization_id "
        "WHERE t.prefix = %s AND t.revoked_at IS NULL"
    )


def active_token(prefix: str) -> ApiToken | None:
    """The unrevoked token with this public prefix, its organization loaded, if any."""
    db = connections[DEFAULT_DB_ALIAS]
    with db.cursor() as cursor:
        cursor.execute(active_token_sql(), [prefix])
        row = cursor.fetchone()
    if row is None:
        return None
    token_values, organization_values = rows.split(row, ApiToken, Organization)
    token = rows.instance(ApiToken, db, token_values)
    token.organization = rows.instance(Organization, db, organization_values)
    return token
