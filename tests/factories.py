"""factory-boy factories for every model the tests create."""

import factory
from django.utils import timezone

from accounts import services as account_services
from accounts.models import Organization
from canned_replies.models import CannedReply
from contacts.models import Contact, ContactGroup


class OrganizationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Organization

    name = factory.Sequence(lambda n: f"Organization {n}")


def issue_token(organization: Organization, **kwargs) -> str:
    """A fresh token, marked as just used so that authentication makes no write."""
    issued = account_services.issue_token(organization=organization, **kwargs)
    issued.record.last_used_at = timezone.now()
    issued.record.save(update_fields=["last_used_at"])
    return issued.token


class ContactGroupFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ContactGroup

    organization = factory.SubFactory(OrganizationFactory)
    name = factory.Sequence(lambda n: f"Group {n}")


class ContactFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Contact

    organization = factory.SubFactory(OrganizationFactory)
    first_name = factory.Faker("first_name")
    last_name = factory.Faker("last_name")
    phone = factory.Sequence(lambda n: f"4915112{n:06d}")
    email = factory.Faker("email")


class CannedReplyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CannedReply

    organization = factory.SubFactory(OrganizationFactory)
    name = factory.Sequence(lambda n: f"Reply {n}")
    trigger = "hello"
    match_criteria = "contains"
    metadata = factory.LazyAttribute(lambda o: {"type": "text", "data": {"text": "Hi there!"}})
