"""The core's hand-written SQL: a column read and written as the database holds it
(the encryption's migrations and key rotation must see the stored value, not what the
field decrypts), and the database cache's row lock. The ORM reads every column through
its field, and has no lock on a row it does not select: these say what it cannot."""

from collections.abc import Iterator
from typing import cast

from django.db import models


def quoted(connection, model: type[models.Model], field_name: str) -> tuple[str, str, str]:
    """The table, primary key and column of `field_name`, quoted for `connection`."""
    quote = connection.ops.quote_name
    return (
        quote(model._meta.db_table),
        quote(model._meta.pk.column),
        # A column's name: `field_name` names a concrete field, never a reverse relation.
        quote(cast(models.Field, model._meta.get_field(field_name)).column),
    )


def stored_values(connection, model, field_name: str, batch: int) -> Iterator[list[tuple]]:
    """The raw (pk, stored value) pairs of a column, in batches by primary key."""
    table, pk, column = quoted(connection, model, field_name)
    last = None
    while True:
        where = "" if last is None else f" WHERE {pk} > %s"
        sql = f"SELECT {pk}, {column} FROM {table}{where} ORDER BY {pk} LIMIT {int(batch)}"  # noqa: S608
        with connection.cursor() as cursor:
            cursor.execute(sql, [] if last is None else [last])
            rows = cursor.fetchall()
        if not rows:
            return
        yield rows
        last = rows[-1][0]


def encrypted_values(connection, model, field_name: str, prefix: str, batch: int):
    """The stored values of a column that start with `prefix` (encrypted values), in
    batches by primary key; the start-up's check of the keys reads every one."""
    table, pk, column = quoted(connection, model, field_name)
    last = None
    while True:
        after = "" if last is None else f" AND {pk} > %s"
        sql = (
            f"SELECT {pk}, {column} FROM {table} WHERE {column} LIKE %s{after} "  # noqa: S608
            f"ORDER BY {pk} LIMIT {int(batch)}"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [prefix + "%"] if last is None else [prefix + "%", last])
            rows = cursor.fetchall()
        if not rows:
            return
        yield [stored for _pk, stored in rows]
        last = rows[-1][0]


def replace_stored_values(connection, model, field_name: str, updates: list[tuple]) -> int:
    """(new, pk, old) each: the column set to `new` where it still holds `old` (a
    concurrent save is never overwritten); how many rows changed."""
    table, pk, column = quoted(connection, model, field_name)
    update = f"UPDATE {table} SET {column} = %s WHERE {pk} = %s AND {column} = %s"  # noqa: S608
    changed = 0
    with connection.cursor() as cursor:
        for values in updates:
            cursor.execute(update, values)
            changed += cursor.rowcount
    return changed


def stored_value(connection, model, pk_value, field_name: str):
    """One row's column as the database holds it; None for no such row."""
    table, pk, column = quoted(connection, model, field_name)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM {table} WHERE {pk} = %s", [pk_value])  # noqa: S608
        row = cursor.fetchone()
    return None if row is None else row[0]


def lock_cache_row(connection, table: str, cache_key: str) -> None:
    """The cache row of `cache_key` locked until the transaction ends (SQLite: its
    IMMEDIATE transactions hold the write lock already)."""
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT cache_key FROM {connection.ops.quote_name(table)} WHERE cache_key = %s{lock}",  # noqa: S608
            [cache_key],
        )


def connection_limits(connection) -> dict[str, int]:
    """PostgreSQL's connection limits: max_connections and the slots reserved out of it
    (superuser_reserved_connections; reserved_connections from PostgreSQL 16). Server
    settings, which the ORM has no model for; readable without any privilege."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name, setting FROM pg_settings WHERE name IN "
            "('max_connections', 'superuser_reserved_connections', 'reserved_connections')"
        )
        return {name: int(setting) for name, setting in cursor.fetchall()}
