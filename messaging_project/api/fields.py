"""Serializer fields shared by the apps' input serializers.

Text a database cannot store is refused here, in one place per kind of input: DRF's
CharField (and so StrictCharField, EmailField and every other string field) refuses NUL
and lone surrogates itself; JSON passed through as given is walked by PassThroughJSONField
with the same rule and the same wording (messaging_project.core.storable).
"""

import json
from typing import Any

from rest_framework import serializers

from messaging_project.core.phones import InvalidPhoneNumber, normalize_phone
from messaging_project.core.storable import json_problem


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


class PassThroughJSONField(serializers.Field):
    """JSON handed on as given (to the channel, into a JSON column), checked only for
    what would break on the way (`json_problem`); subclasses add the shape they expect.
    An error names the offending place by its dotted path under the field."""

    max_depth: int  # objects and lists allowed inside the value, one within another

    def to_internal_value(self, data: Any) -> Any:
        found = json_problem(data, max_depth=self.max_depth)
        if found is not None:
            path, message = found
            if not path:
                raise serializers.ValidationError([message])
            raise serializers.ValidationError({".".join(map(str, path)): [message]})
        return data

    def to_representation(self, value: Any) -> Any:
        return value


class MaxJSONBytesValidator:
    """At most `limit` bytes of compact UTF-8 JSON. Run it after the walk above: it
    encodes the value, which only storable text and bounded nesting make safe."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def __call__(self, value: Any) -> None:
        size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
        if size > self.limit:
            raise serializers.ValidationError(
                f"Too large: at most {self.limit} bytes of JSON; this is {size}."
            )
