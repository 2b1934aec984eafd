"""The reads every request makes, written out (accounts/queries.py, business_numbers'
`live_numbers`): one statement each, and the records the ORM would have made."""

import pytest

from accounts.models import Organization
from accounts.services import authenticate_token, issue_token, revoke_token
from business_numbers import services as number_services
from business_numbers.models import Number, numbers_of
from tests.channel import ACCESS_TOKEN

pytestmark = pytest.mark.django_db


def test_a_token_is_read_with_its_organization_in_one_statement(org_a, django_assert_num_queries):
    issued = issue_token(organization=org_a, name="shop")
    authenticate_token(issued.token)  # notes its first use
    with django_assert_num_queries(1):
        record = authenticate_token(issued.token)
        assert record is not None
        assert record.organization == org_a
        assert record.organization.name == org_a.name
        assert record.name == "shop"
        assert record.last_used_at is not None
    assert record.pk == issued.record.pk


def test_a_revoked_token_or_a_wrong_secret_is_no_token(org_a):
    issued = issue_token(organization=org_a)
    assert authenticate_token(issued.token[:-1] + ("x" if issued.token[-1] != "x" else "y")) is None
    revoke_token(token=issued.record)
    assert authenticate_token(issued.token) is None


def test_an_organizations_live_numbers_are_one_statement_default_first(
    cloud_org, django_assert_num_queries
):
    second = number_services.create_number(
        organization=cloud_org,
        label="Support",
        phone_number_id="106540352242999",
        access_token="EAAG-support",
        business_account_id="102290129340398",
    )
    gone = number_services.create_number(organization=cloud_org, label="Old", kind="sandbox")
    Number.objects.filter(pk=gone.pk).update(deleted_at=gone.created_at)
    organization = Organization.objects.get(pk=cloud_org.pk)
    with django_assert_num_queries(1):
        numbers = numbers_of(organization)
        assert numbers_of(organization) is numbers  # read once per instance
    assert [number.pk for number in numbers] == [
        Number.objects.get(organization=cloud_org, is_default=True).pk,
        second.pk,
    ]
    default, support = numbers
    assert default.access_token == ACCESS_TOKEN  # decrypted as the ORM would
    assert support.access_token == "EAAG-support"
    assert support.label == "Support"
    assert default.organization is organization
