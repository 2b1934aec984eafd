"""Model instances from the rows of written-out statements, and one instance's insert.

On the busiest paths a statement is written out rather than built by the ORM, whose
compiling can cost more than running it (each app's queries.py). Such a statement selects
a model's concrete columns in `columns()`' order; `instance()` turns that slice of a row
into the instance the ORM would have made, its columns converted as the ORM converts
them (decrypted secrets, JSON, SQLite's dates), built without Model.__init__'s work per
field where no init signal listens (receivers connect in ready(): looked at once).
`insert()` is `save(force_insert=True)` for a model with an automatic primary key,
without the compiling; `insert_all()` is `bulk_create()` for many, likewise.
"""

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, TypeVar, cast

from django.db import connections, models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init

from messaging_project.core.database import column_types, insert_statements

M = TypeVar("M", bound=models.Model)

# (model, database alias): the converters of each column that has any, and the
# attribute names from_db() takes.
_converters: dict[tuple[type, str], list[tuple[int, Callable[..., Any]]]] = {}
_names: dict[type, list[str]] = {}
# The models that no pre_init or post_init receiver listens to: loaded() builds them.
_plain: dict[type, bool] = {}


@cache
def columns(model: type[models.Model], alias: str) -> str:
    """The model's concrete columns, each prefixed with the table's `alias` in the
    statement."""
    return ", ".join(f"{alias}.{field.column}" for field in model._meta.concrete_fields)


def wrapper(connection):
    """The connection itself for `django.db.connection`, a proxy each of whose attributes
    is a look-up in the thread's asgiref Local: preparing and converting a row's values
    reads several per value (`ops`, `features`, `alias`), a tenth of the worker's CPU in
    applying a batch of statuses. Resolved once, outside a loop: the look-up is one too."""
    if isinstance(connection, BaseDatabaseWrapper):
        return connection
    return connections[connection.alias]


def split(row: Sequence[Any], *models: type[models.Model]) -> list[Sequence[Any]]:
    """A row that selects `columns()` of each of `models` in turn, cut into each one's
    values."""
    parts, start = [], 0
    for model in models:
        end = start + len(model._meta.concrete_fields)
        parts.append(row[start:end])
        start = end
    return parts


def instance(model: type[M], connection, values: Sequence[Any]) -> M:
    """The instance of `model` whose concrete columns are `values`, as loaded."""
    connection = wrapper(connection)
    key = (model, connection.alias)
    if key not in _converters:
        table = model._meta.db_table
        _converters[key] = [
            (index, converter)
            for index, field in enumerate(model._meta.concrete_fields)
            for converter in connection.ops.get_db_converters(field.get_col(table))
            + field.get_db_converters(connection)
        ]
        _names[model] = [field.attname for field in model._meta.concrete_fields]
    values = list(values)
    for index, convert in _converters[key]:
        values[index] = convert(values[index], None, connection)
    return loaded(model, connection.alias, values)


def related(instance: models.Model, name: str, value: models.Model | None) -> None:
    """`instance.<name> = value` for a foreign key whose column the row has set already:
    the related instance kept as loaded, without the assignment's checks (which cost a
    page of chats a fifth of its reading)."""
    type(instance)._meta.get_field(name).set_cached_value(instance, value)  # type: ignore[union-attr]


def loaded(model: type[M], alias: str, values: list[Any]) -> M:
    """`model.from_db(alias, every concrete field, values)`: the instance's attributes set
    as Model.__init__ sets them on a new instance, without its per-field setattr()
    (a page's instances cost the list of conversations a third of its CPU). A model
    that an init signal's receiver listens to is made by from_db() itself."""
    plain = _plain.get(model)
    if plain is None:
        plain = _plain[model] = not (
            pre_init.has_listeners(model) or post_init.has_listeners(model)
        )
        _names.setdefault(model, [field.attname for field in model._meta.concrete_fields])
    if not plain:
        return model.from_db(alias, _names[model], values)
    new = model.__new__(model)
    state = new._state = ModelState()
    state.adding, state.db = False, alias
    new.__dict__.update(zip(_names[model], values, strict=True))
    return new


# (model, database alias): the fields an insert writes, the statement's head
# ("INSERT INTO t (a, b) ") and its end (" RETURNING id").
_inserts: dict[tuple[type, str], tuple[list[models.Field], str, str]] = {}


def _insert_of(model: type[models.Model], connection) -> tuple[list[models.Field], str, str]:
    key = (model, connection.alias)
    if key not in _inserts:
        meta = model._meta
        assert meta.pk is not None and meta.pk.db_returning  # an automatic key
        fields = [field for field in meta.concrete_fields if not field.primary_key]
        columns = ", ".join(cast(str, field.column) for field in fields)
        _inserts[key] = (
            fields,
            f"INSERT INTO {meta.db_table} ({columns}) ",
            f" RETURNING {meta.pk.column}",
        )
    return _inserts[key]


def _prepared(instance: models.Model, fields: list[models.Field], connection) -> list[Any]:
    """The instance's values as an insert writes them (defaults, `auto_now_add`,
    encryption, JSON), each prepared by its field."""
    return [field.get_db_prep_save(field.pre_save(instance, True), connection) for field in fields]


def _inserted(instance: models.Model, pk: Any, alias: str) -> None:
    instance.pk = pk
    instance._state.adding = False
    instance._state.db = alias


def insert(instance: models.Model, connection) -> None:
    """Insert `instance` as `save(force_insert=True)` would, for a model whose primary key
    the database assigns and that no signal listens to: each value prepared by its field,
    the key read back with RETURNING. An IntegrityError raises as from save(). About
    1.3 ms of CPU less than save() for a chat (in-process, measured on SQLite)."""
    connection = wrapper(connection)
    fields, head, returning = _insert_of(type(instance), connection)
    with connection.cursor() as cursor:
        cursor.execute(
            f"{head}VALUES ({', '.join(['%s'] * len(fields))}){returning}",
            _prepared(instance, fields, connection),
        )
        (pk,) = cursor.fetchone()
    _inserted(instance, pk, connection.alias)


# Rows of one insert_all() statement at most.
INSERT_ALL_ROWS = 500


def insert_all(instances: Sequence[models.Model], connection) -> None:
    """insert() for many instances of one model, as `bulk_create()` stores them (no
    signal either), in a statement per INSERT_ALL_ROWS (database.insert_statements): on
    PostgreSQL their rows go as one JSON document, whose quoting libpq does in C, where
    bulk_create() compiles and quotes each value in Python; elsewhere bulk_create()
    itself. The keys come back in the rows' order (RETURNING of an INSERT ... SELECT
    yields the rows as they are inserted, which bulk_create() relies on too). An
    IntegrityError raises as from bulk_create(). Half the CPU of bulk_create() for a
    campaign's chats (in-process, on PostgreSQL)."""
    if not instances:
        return
    model = type(instances[0])
    connection = wrapper(connection)
    if connection.vendor != "postgresql":
        model._default_manager.using(connection.alias).bulk_create(instances)
        return
    fields, head, returning = _insert_of(model, connection)
    types = column_types(model, tuple(field.name for field in fields), using=connection.alias)
    values = [_prepared(instance, fields, connection) for instance in instances]
    statements = insert_statements(
        head, types, values, per_statement=INSERT_ALL_ROWS, using=connection.alias
    )
    keys: list[tuple] = []
    with connection.cursor() as cursor:
        for sql, params in statements:
            cursor.execute(sql + returning, params)
            keys += cursor.fetchall()
    for instance, (pk,) in zip(instances, keys, strict=True):
        _inserted(instance, pk, connection.alias)
