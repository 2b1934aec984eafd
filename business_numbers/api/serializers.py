"""What the numbers' and the channel's endpoints take (docs/numbers.md)."""

from typing import Any

from rest_framework import serializers

from messaging_project.api.fields import (
    MaxJSONBytesValidator,
    PassThroughJSONField,
    StrictBooleanField,
    StrictCharField,
)
from messaging_project.core.storable import without_unstorable

# The API's names for a number's kind, and the stored ones (docs/numbers.md).
KINDS = {"sandbox": "sandbox", "cloud": "cloud_api"}


def refuse_unknown_fields(
    serializer: serializers.Serializer, attrs: dict[str, Any], message: str = ""
) -> None:
    unknown = sorted(set(serializer.initial_data) - set(serializer.fields))
    if unknown:
        names = ", ".join(sorted(serializer.fields))
        message = message or f"Unknown field; the fields are: {names}."
        # A name is echoed as the error's key: one no encoder can write (a lone
        # surrogate) is echoed without it, never a 500.
        raise serializers.ValidationError({without_unstorable(name): [message] for name in unknown})


class NumberInputSerializer(serializers.Serializer):
    """`POST /api/numbers`: a Cloud API number with its credentials, or a sandbox number."""

    # A declared field (DRF's metaclass takes it off the class): no clash with `label`.
    label = StrictCharField(required=False, allow_blank=True, default="", max_length=100)  # type: ignore[assignment]
    kind = serializers.ChoiceField(
        choices=["cloud", "sandbox"],
        required=False,
        default="cloud",
        # Not the value echoed back: it may hold text no JSON answer can carry.
        error_messages={"invalid_choice": "Choose cloud or sandbox."},
    )
    phone_number_id = StrictCharField(required=False, allow_blank=True, default="", max_length=32)
    business_account_id = StrictCharField(
        required=False, allow_blank=True, default="", max_length=32
    )
    access_token = StrictCharField(
        required=False, allow_blank=True, default="", max_length=1024, write_only=True
    )
    is_default = StrictBooleanField(required=False, default=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        refuse_unknown_fields(self, attrs)
        attrs["kind"] = KINDS[attrs["kind"]]  # the stored name
        return attrs


class NumberUpdateSerializer(serializers.Serializer):
    """`PATCH /api/numbers/{uuid}`: only the fields sent change; the kind does not."""

    # A declared field (DRF's metaclass takes it off the class): no clash with `label`.
    label = StrictCharField(required=False, allow_blank=True, max_length=100)  # type: ignore[assignment]
    phone_number_id = StrictCharField(required=False, max_length=32)
    business_account_id = StrictCharField(required=False, allow_blank=True, max_length=32)
    access_token = StrictCharField(required=False, max_length=1024, write_only=True)
    is_default = StrictBooleanField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        refuse_unknown_fields(self, attrs)
        return attrs


class ChannelSettingsInputSerializer(serializers.Serializer):
    """`PATCH /api/channel`: the settings an organization changes itself."""

    enforce_service_window = StrictBooleanField(
        help_text="Refuse free-form messages (text, buttons, media) to numbers that have "
        "sent nothing in the last 24 hours (422, `channel_error.code` 131047), before "
        "calling WhatsApp. Off by default."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        message = "Unknown field; the settings are: enforce_service_window."
        refuse_unknown_fields(self, attrs, message)
        return attrs


class TemplateComponentsField(PassThroughJSONField):
    """A template's components in WhatsApp's shape (HEADER, BODY, FOOTER, BUTTONS, with
    their `example` values); WhatsApp's rules are the service's to check, by path."""

    max_depth = 6  # components > component > example > body_text > examples
    default_error_messages = {"invalid": "A list of components, such as the BODY."}

    def to_internal_value(self, data: Any) -> list[dict[str, Any]]:
        if not isinstance(data, list):
            self.fail("invalid")
        return super().to_internal_value(data)


class TemplateInputSerializer(serializers.Serializer):
    """`POST /api/templates`: a template to submit to WhatsApp (docs/templates.md)."""

    name = StrictCharField(max_length=512)
    language = StrictCharField(max_length=16)
    category = StrictCharField(max_length=32)
    components = TemplateComponentsField(validators=[MaxJSONBytesValidator(64 * 1024)])
    number = StrictCharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=100,
        help_text="The number whose business account gets the template: its uuid, phone "
        "number id or display number; the default number when not given.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        refuse_unknown_fields(self, attrs)
        attrs["category"] = attrs["category"].upper()
        return attrs


class TemplateUpdateSerializer(serializers.Serializer):
    """`PUT /api/templates/{uuid}`: new components and/or category; name and language stay."""

    category = StrictCharField(required=False, max_length=32)
    components = TemplateComponentsField(
        required=False, validators=[MaxJSONBytesValidator(64 * 1024)]
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(self.initial_data) - set(self.fields))
        if unknown:
            message = (
                "A template's name, language and number stay; change its category or components."
            )
            raise serializers.ValidationError({name: [message] for name in unknown})
        if not attrs:
            raise serializers.ValidationError(
                {"components": ["Give the new components, or the category, or both."]}
            )
        if "category" in attrs:
            attrs["category"] = attrs["category"].upper()
        return attrs
