"""Serializer fields shared by the apps' input serializers."""

from rest_framework import serializers

from contacts.phones import InvalidPhoneNumber, normalize_phone


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers, booleans and objects instead of stringifying them."""

    default_error_messages = {"invalid": "Must be a string."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class PhoneNumberField(StrictCharField):
    """An E.164 number in, digits with the country code out."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 32)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        text = super().to_internal_value(data)
        try:
            return normalize_phone(text)
        except InvalidPhoneNumber as error:
            raise serializers.ValidationError(str(error)) from None


class StrictBooleanField(serializers.BooleanField):
    """0/1 or true/false, as JSON or as the strings clients send; nothing else."""

    TRUE_VALUES = {True, "1", "true"}  # 1 == True in a set
    FALSE_VALUES = {False, "0", "false"}  # 0 == False

    def to_internal_value(self, data):
        # Compared as sent: DRF lower-cases strings first ("TRUE", "FaLsE"), and 1.0 == 1;
        # neither is what we document.
        if isinstance(data, str | int):  # bool is an int; 1.0 is neither
            if data in self.TRUE_VALUES:
                return True
            if data in self.FALSE_VALUES:
                return False
        self.fail("invalid", input=data)
