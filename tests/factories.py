"""factory-boy factories for every model the tests create."""

import factory
from django.utils import timezone

from accounts import services as account_services
from accounts.models import Organization
from business_numbers.models import MessageTemplate, Number
from campaigns.models import Campaign
from canned_replies.models import CannedReply
from contacts.models import Contact, ContactGroup
from sending.models import Chat
from sending.services.conversations import with_conversations


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


def default_number(organization):
    return Number.objects.default_for(organization)


def create_chat(**fields):
    """A chat written directly (as the webhook or a send would), from the organization's
    default number unless `number` is given, in its conversation."""
    chat = Chat(**fields)
    if chat.number_id is None:
        chat.number = default_number(chat.organization)
    with_conversations([chat])
    chat.save(force_insert=True)
    return chat


def create_template(**fields):
    """A synced template of the organization's default number unless `number` is given."""
    fields.setdefault("number", default_number(fields["organization"]))
    return MessageTemplate.objects.create(**fields)


def create_campaign_record(**fields):
    """A campaign row written directly, from the default number unless `number` is given."""
    fields.setdefault("number", default_number(fields["organization"]))
    return Campaign.objects.create(**fields)
