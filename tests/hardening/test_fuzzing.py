"""Schemathesis against the service's own OpenAPI schema, in-process over WSGI.

Every operation of /api/schema is called with generated requests, valid and invalid,
with a valid token. Each response must not be a 500 and must match the schema: a
documented status code, its content type and its body. Path uuids and phone numbers
are often swapped for real ones, so edits, deletes and sends get past the 404 and
the phone check and reach the services.

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
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.factories import (
    CannedReplyFactory,
    ContactFactory,
    ContactGroupFactory,
    OrganizationFactory,
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
schema.config.generation.update(modes=["positive", "negative"], deterministic=True)


@pytest.fixture
def test_transaction_survives_requests():
    """The WSGI handler closes the database connection after each request when it is not
    in autocommit mode, which the test's transaction never is (PostgreSQL would then
    answer 503s). Django's own test client disconnects the same handler."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def seeded(db, test_transaction_survives_requests):
    """An organization that will not hit its rate limit, with one record of each kind."""
    organization = OrganizationFactory(rate_limit=1_000_000)
    group = ContactGroupFactory(organization=organization)
    contact = ContactFactory(organization=organization, contact_group=group)
    records = {
        "contacts": contact,
        "contact-groups": group,
        "canned-replies": CannedReplyFactory(organization=organization),
        "chats": ChatFactory(organization=organization, contact=contact),
        "templates": MessageTemplateFactory(organization=organization),
    }
    return {"token": issue_token(organization), "records": records}


def steer(case, records) -> None:
    """Point about half the cases at real records and real phone numbers, chosen by a
    hash of the case so that runs stay reproducible."""
    pick = zlib.crc32(repr((case.path_parameters, case.body)).encode()) % 2 == 0
    if pick and case.path_parameters and "uuid" in case.path_parameters:
        resource = case.operation.path.split("/")[2]
        case.path_parameters["uuid"] = str(records[resource].uuid)
    if pick and isinstance(case.body, dict) and "phone" in case.body:
        case.body["phone"] = "+14155552671"


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
    # The WSGI test client does not undo gzip, which every real client does.
    headers = {"Authorization": f"Bearer {seeded['token']}", "Accept-Encoding": "identity"}
    response = case.call(headers=headers)
    case.validate_response(response, checks=CHECKS, headers=headers)
