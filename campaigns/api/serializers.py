"""Campaigns on the wire: the create body, checked before anything is stored, and the
shapes of docs/campaigns.md."""

from typing import Any

from django.utils import timezone
from rest_framework import serializers

from contacts.models import ContactGroup
from messaging_project.api.fields import StrictCharField
from sending.api.serializers import TemplateSerializer, from_field

PHONES_MAX = 10_000
RATE_MIN, RATE_MAX = 1, 1000


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer: no booleans, no strings, no 2.5."""

    default_error_messages = {"invalid": "Must be an integer."}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        if isinstance(data, float) and not data.is_integer():
            self.fail("invalid")
        return super().to_internal_value(int(data))


class CampaignInputSerializer(serializers.Serializer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["from"] = from_field()  # a Python keyword: not a class attribute

    name = StrictCharField(max_length=255)
    template = TemplateSerializer()
    contact_group = serializers.UUIDField(required=False, allow_null=True)
    phones = serializers.ListField(
        child=StrictCharField(max_length=64),
        required=False,
        allow_null=True,
        min_length=1,
        max_length=PHONES_MAX,
        error_messages={
            "min_length": "Send at least one phone number.",
            "max_length": f"A campaign has at most {PHONES_MAX} phone numbers.",
        },
    )
    scheduled_at = serializers.DateTimeField(required=False, allow_null=True)
    rate = StrictIntegerField(
        required=False,
        allow_null=True,
        min_value=RATE_MIN,
        max_value=RATE_MAX,
        error_messages={
            "min_value": f"The rate is {RATE_MIN} to {RATE_MAX} messages per second.",
            "max_value": f"The rate is {RATE_MIN} to {RATE_MAX} messages per second.",
        },
    )

    def validate_contact_group(self, value):
        if value is None:
            return None
        group = (
            ContactGroup.objects.live()
            .filter(organization=self.context["organization"], uuid=value)
            .first()
        )
        if group is None:
            raise serializers.ValidationError("The selected contact group is invalid.")
        if not group.contacts.filter(deleted_at__isnull=True).exists():
            raise serializers.ValidationError("The contact group has no contacts.")
        return group

    def validate_scheduled_at(self, value):
        if value is not None and value <= timezone.now():
            raise serializers.ValidationError("The scheduled time must be in the future.")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        group, phones = attrs.get("contact_group"), attrs.get("phones")
        if group is not None and phones is not None:
            raise serializers.ValidationError(
                {"contact_group": ["Send a contact_group or phones, not both."]}
            )
        if group is None and phones is None:
            raise serializers.ValidationError(
                {"phones": ["Send the recipients: a contact_group or a list of phones."]}
            )
        attrs["sender"] = attrs.pop("from", None) or None
        return attrs
