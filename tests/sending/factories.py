"""Factories for chats and message templates."""

import factory

from business_numbers.models import MessageTemplate, Number
from sending.models import Chat, ChatStatus
from sending.services.conversations import with_conversations
from tests.factories import ContactFactory, OrganizationFactory


class ChatFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Chat

    organization = factory.SubFactory(OrganizationFactory)
    contact = factory.SubFactory(
        ContactFactory, organization=factory.SelfAttribute("..organization")
    )
    number = factory.LazyAttribute(lambda o: Number.objects.default_for(o.organization))
    wam_id = factory.Sequence(lambda n: f"wamid.TEST{n:08d}")
    metadata = factory.LazyAttribute(lambda o: {"type": "text", "text": {"body": "Hello"}})
    status = ChatStatus.ACCEPTED

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        chat = model_class(*args, **kwargs)
        with_conversations([chat])  # as every chat is recorded
        chat.save(force_insert=True)
        return chat


def order_update_components() -> list[dict]:
    """A template as Graph lists it: a text header, a body with two parameters, buttons."""
    return [
        {"type": "HEADER", "format": "TEXT", "text": "Order {{1}}"},
        {"type": "BODY", "text": "Hi {{1}}, your order {{2}} has shipped."},
        {"type": "FOOTER", "text": "Reply STOP to opt out"},
        {
            "type": "BUTTONS",
            "buttons": [
                {"type": "QUICK_REPLY", "text": "Thanks"},
                {"type": "URL", "text": "Track", "url": "https://example.com/track/{{1}}"},
                {"type": "PHONE_NUMBER", "text": "Call us", "phone_number": "+15550001111"},
            ],
        },
    ]


class MessageTemplateFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = MessageTemplate

    organization = factory.SubFactory(OrganizationFactory)
    number = factory.LazyAttribute(lambda o: Number.objects.default_for(o.organization))
    name = factory.Sequence(lambda n: f"order_update_{n}")
    language = "en_US"
    category = "UTILITY"
    status = "APPROVED"
    components = factory.LazyFunction(order_update_components)
    external_id = factory.Sequence(lambda n: f"{900000 + n}")
