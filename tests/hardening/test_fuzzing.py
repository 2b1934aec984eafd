"""Schemathesis against the service's own OpenAPI schema, in-process over WSGI.

Every operation of /api/schema is called with generated requests, valid and invalid,
with a valid token. Each response must not be a 500 and must match the schema: a
documented status code, its content type and its body. Path uuids and phone numbers
are often swapped for real ones, so edits, deletes and sends get past the 404 and
the phone check and reach the services.

Strings include text a database cannot store. Schemathesis draws NUL when its
generation config allows it (`allow_x00`, kept on here), but never a lone surrogate:
its `codec` setting only narrows the alphabet, and with no codec it leaves surrogates
out because they cannot travel as UTF-8. JSON can carry one as an escape (`\\ud800`),
so hooks put a NUL or a lone surrogate into one string or key of about half the
bodies, and a NUL into one query parameter or path parameter of about half the
requests (a URL carries UTF-8, so a surrogate cannot be spelled there).

The budget is small and derandomized (the same cases every run); raise FUZZ_EXAMPLES
locally for a deeper run.
"""

import os
import zlib

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from business_numbers.models import Number
from events.models import Endpoint
from tests.factories import (
    CannedReplyFactory,
    ContactFactory,
    ContactGroupFactory,
    OrganizationFactory,
    create_campaign_record,
    issue_token,
)
from tests.sending.factories import ChatFactory, MessageTemplateFactory

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]

schema = schemathesis.openapi.from_wsgi("/api/schema", get_wsgi_application())
schema.config.phases.update(phases=["examples", "fuzzing"])
schema.config.generation.update(
    modes=["positive", "negative"], deterministic=True, allow_x00=True, codec="utf-8"
)

UNSTORABLE = ["\x00", "\ud800", "\udfff"]


def string_slots(value, path=()):
    """Where a string or a key sits in a JSON value: (path, "value" | "key")."""
    if isinstance(value, str):
        yield path, "value"
    elif isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key), "key"
            yield from string_slots(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from string_slots(item, (*path, index))


def with_character(value, slot, character):
    """A copy of `value` with `character` put at the front of the string or key at `slot`.
    Only the containers on the way are copied (schemathesis's own str subclasses, such
    as a query's delimited arrays, do not survive a deep copy)."""
    path, kind = slot
    if not path:
        return character + value
    first, rest = path[0], path[1:]
    if isinstance(value, list):
        copied = list(value)
        copied[first] = with_character(value[first], (rest, kind), character)
        return copied
    if kind == "key" and not rest:
        return {(character + key if key == first else key): item for key, item in value.items()}
    return {**value, first: with_character(value[first], (rest, kind), character)}


def unchanged_or_with_one_of(value, characters, *, keys: bool):
    """A strategy: `value` as it is, or with one of `characters` in one of its strings
    (and, with `keys`, its object keys)."""
    slots = [slot for slot in string_slots(value) if keys or slot[1] == "value"]
    if not slots:
        return st.just(value)
    changed = st.builds(
        with_character, st.just(value), st.sampled_from(slots), st.sampled_from(characters)
    )
    return st.one_of(st.just(value), changed)


def without_surrogates(value):
    """A form body (urlencoded or multipart) travels as UTF-8, which cannot spell a lone
    surrogate: the hook's surrogate becomes a NUL, still text a database cannot store."""
    if isinstance(value, str):
        return "".join("\x00" if "\ud800" <= char <= "\udfff" else char for char in value)
    if isinstance(value, dict):
        return {without_surrogates(key): without_surrogates(item) for key, item in value.items()}
    if isinstance(value, list):
        return [without_surrogates(item) for item in value]
    return value


@schema.hook
def flatmap_body(context, body):
    return unchanged_or_with_one_of(body, UNSTORABLE, keys=True)


@schema.hook
def flatmap_query(context, query):
    # A parameter's name keeps its spelling: with a NUL it is merely an unknown parameter.
    return unchanged_or_with_one_of(query, ["\x00"], keys=False)


@schema.hook
def flatmap_path_parameters(context, path_parameters):
    return unchanged_or_with_one_of(path_parameters, ["\x00"], keys=False)


@pytest.fixture
def transaction_survives_requests():
    """The WSGI handler closes the database connection after each request when it is not
    in autocommit mode, which the test's transaction never is (PostgreSQL would then
    answer 503s). Django's own test client disconnects the same handler."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def seeded(db, transaction_survives_requests):
    """An organization that will not hit its rate limit, with one record of each kind."""
    organization = OrganizationFactory(rate_limit=1_000_000)
    group = ContactGroupFactory(organization=organization)
    contact = ContactFactory(organization=organization, contact_group=group)
    chat = ChatFactory(organization=organization, contact=contact)
    records = {
        "contacts": contact,
        "contact-groups": group,
        "canned-replies": CannedReplyFactory(organization=organization),
        "chats": chat,
        "conversations": chat.conversation,
        "templates": MessageTemplateFactory(organization=organization),
        "campaigns": create_campaign_record(
            organization=organization,
            name="Fuzzed",
            template={"name": "hello", "language": {"code": "en_US"}},
            phones=["+14155552671"],
            rate=80,
        ),
        "webhooks": Endpoint.objects.create(
            organization=organization, url="https://example.com/hook"
        ),
        "numbers": Number.objects.default_for(organization),
    }
    return {"token": issue_token(organization), "records": records}


def steer(case, records) -> None:
    """Point about half the cases at real records, real phone numbers and a real
    language code, chosen by a hash of the case so that runs stay reproducible."""
    pick = zlib.crc32(repr((case.path_parameters, case.body)).encode()) % 2 == 0
    if pick and case.path_parameters and "uuid" in case.path_parameters:
        resource = case.operation.path.split("/")[2]
        case.path_parameters["uuid"] = str(records[resource].uuid)
    if pick and isinstance(case.body, dict) and "phone" in case.body:
        case.body["phone"] = "+14155552671"
    template = case.body.get("template") if isinstance(case.body, dict) else None
    if pick and isinstance(template, dict) and isinstance(template.get("language"), dict):
        template["language"]["code"] = "en_US"  # so that template sends reach the service


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_response_matches_the_schema(case, seeded):
    steer(case, seeded["records"])
    if case.media_type != "application/json":  # a form body: UTF-8 on the wire
        case.body = without_surrogates(case.body)
    # The WSGI test client does not undo gzip, which every real client does.
    headers = {"Authorization": f"Bearer {seeded['token']}", "Accept-Encoding": "identity"}
    response = case.call(headers=headers)
    case.validate_response(response, checks=CHECKS, headers=headers)
