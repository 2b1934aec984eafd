"""The analytics' query parameters, checked as every API input is (a 400 naming them)."""

import re
from datetime import date

from django.utils.translation import gettext_noop
from rest_framework import serializers

from business_numbers.models import Number

# The longest range one request reads: a year and a day, for a leap year's whole year.
MAX_DAYS = 366
REVERSED = gettext_noop("The end date must not be before the start date.")
TOO_LONG = gettext_noop("The range may cover at most 366 days.")
DATE_FORMAT = gettext_noop("A date is YYYY-MM-DD.")


class DayField(serializers.DateField):
    """A UTC day written YYYY-MM-DD exactly (strptime alone takes 2026-1-1 too)."""

    def __init__(self, **kwargs):
        super().__init__(input_formats=["%Y-%m-%d"], error_messages={"invalid": DATE_FORMAT})

    def to_internal_value(self, value):
        if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            self.fail("invalid")
        return super().to_internal_value(value)


class RangeSerializer(serializers.Serializer):
    # `from` is a keyword in Python: the field is declared under its name below.
    to = DayField()
    format = serializers.ChoiceField(choices=["json", "csv"], required=False, default="json")

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = DayField()
        return fields

    def validate(self, attrs):
        start: date = attrs["from"]
        end: date = attrs["to"]
        if end < start:
            raise serializers.ValidationError({"to": [REVERSED]})
        if (end - start).days + 1 > MAX_DAYS:
            raise serializers.ValidationError({"to": [TOO_LONG]})
        return attrs


NO_SUCH_NUMBER = gettext_noop("No such number.")


class MessagesRangeSerializer(RangeSerializer):
    number = serializers.UUIDField(required=False, error_messages={"invalid": NO_SUCH_NUMBER})

    def validate_number(self, value):
        """One of the organization's numbers (another's is as unknown as a missing one)."""
        found = Number.objects.filter(organization=self.context["organization"], uuid=value).first()
        if found is None:
            raise serializers.ValidationError(NO_SUCH_NUMBER)
        return found
