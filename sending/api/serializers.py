"""Sending on the wire: WhatsApp's limits checked before anything leaves (the output
shapes are in sending/representations.py)."""

import re
from typing import Any

from rest_framework import serializers

from messaging_project.api.fields import (
    MaxJSONBytesValidator,
    PassThroughJSONField,
    PhoneNumberField,
    StrictBooleanField,
    StrictCharField,
)
from messaging_project.core.interactive import in_english, interactive_errors
from messaging_project.core.public_urls import url_problem
from sending.services.payloads import MEDIA_TYPES

# WhatsApp Cloud API limits.
TEXT_BODY_MAX = 4096
INTERACTIVE_BODY_MAX = 1024
HEADER_MAX = FOOTER_MAX = 60
BUTTONS_MAX = 3
BUTTON_TITLE_MAX = 20
BUTTON_ID_MAX = 256
REACTION_MAX = 16  # one emoji, with its modifiers and joiners
LOCATION_TEXT_MAX = 1000
CONTACT_CARDS_MAX = 50
LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}(_[A-Z]{2})?$")


class ButtonSerializer(serializers.Serializer):
    id = StrictCharField(max_length=BUTTON_ID_MAX)
    title = StrictCharField(max_length=BUTTON_TITLE_MAX)


def optional_text(max_length: int) -> StrictCharField:
    return StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=max_length)


REPLY_TO_MAX = 255


def reply_to_field():
    return StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=REPLY_TO_MAX,
        help_text=(
            "The message this one answers: a chat uuid of the organization, or a WhatsApp "
            "message id (`wamid....`). WhatsApp shows the reply quoting it."
        ),
    )


def from_field():
    return StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=100,
        help_text=(
            "The organization's number to send from: its uuid, phone number id or display "
            "number. Without it: a reply goes from the number of the chat it answers, "
            "else from the number the contact last wrote to, else from the default number."
        ),
    )


class NewContactFields(serializers.Serializer):
    """The optional fields the original product stores on a contact its send creates,
    and `reply_to` and `from`, which every send takes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["from"] = from_field()  # a Python keyword: not a class attribute

    reply_to = reply_to_field()
    first_name = optional_text(255)
    last_name = optional_text(255)
    email = serializers.EmailField(
        required=False, allow_null=True, allow_blank=True, max_length=255
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        attrs["new_contact"] = {
            field: attrs.pop(field, None) or None for field in ("first_name", "last_name", "email")
        }
        attrs["reply_to"] = attrs.get("reply_to") or None
        attrs["sender"] = attrs.pop("from", None) or None
        return attrs


class MessageTextField(StrictCharField):
    """A text message's body: sent as written (leading spaces or blank lines may be
    deliberate), but never blank."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", TEXT_BODY_MAX)
        super().__init__(trim_whitespace=False, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if not value.strip():
            raise serializers.ValidationError("The message may not be blank.")
        return value


class SendMessageInputSerializer(NewContactFields):
    phone = PhoneNumberField()
    message = MessageTextField()
    header = optional_text(HEADER_MAX)
    footer = optional_text(FOOTER_MAX)
    preview_url = StrictBooleanField(
        required=False,
        default=True,
        help_text="Whether WhatsApp shows a link's preview (text messages; default true).",
    )
    buttons = serializers.ListField(
        child=ButtonSerializer(),
        required=False,
        allow_null=True,
        min_length=1,
        max_length=BUTTONS_MAX,
        error_messages={
            "min_length": "Send 1 to 3 buttons, or leave buttons out.",
            "max_length": "A message has at most 3 buttons.",
        },
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        buttons = attrs.get("buttons")
        errors: dict[str, Any] = {}
        if not buttons:
            # A text message has no header or footer: the original product ignores them
            # (its clients send them always), and so do we.
            attrs["header"] = attrs["footer"] = None
        else:
            if len(attrs["message"]) > INTERACTIVE_BODY_MAX:
                errors["message"] = [
                    f"A message with buttons has at most {INTERACTIVE_BODY_MAX} characters."
                ]
            duplicates = duplicate_buttons(buttons)
            if any(duplicates):
                errors["buttons"] = duplicates
        if errors:
            raise serializers.ValidationError(errors)
        for field in ("header", "footer"):
            attrs[field] = attrs.get(field) or None
        return attrs


def duplicate_buttons(buttons: list[dict[str, str]]) -> list[dict[str, list[str]]]:
    """Per button, its errors for a title or id an earlier button already has."""
    seen: dict[str, set[str]] = {"id": set(), "title": set()}
    errors = []
    for button in buttons:
        found = {}
        for field in ("id", "title"):
            if button[field] in seen[field]:
                found[field] = [f"Each button needs its own {field}; this one is repeated."]
            seen[field].add(button[field])
        errors.append(found)
    return errors


CAPTION_MAX = 1024
FILE_NAME_MAX = 255


class MediaUrlField(StrictCharField):
    """A URL WhatsApp fetches the media from: https (http only where private URLs are
    allowed), on a public address, the rule of the event webhooks (docs/media.md)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 2048)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        url = super().to_internal_value(data)
        problem = url_problem(url, https_only=True)
        if problem:
            raise serializers.ValidationError(problem)
        return url


MEDIA_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


def media_type_field(**kwargs: Any) -> serializers.ChoiceField:
    return serializers.ChoiceField(
        choices=MEDIA_TYPES,
        error_messages={
            "invalid_choice": "The media type must be one of: " + ", ".join(MEDIA_TYPES) + "."
        },
        **kwargs,
    )


class MediaFields(serializers.Serializer):
    """A media message's fields, wherever one is sent: `media_type`, the media by link
    (`media_url`) or by an uploaded media's `id`, and `caption` and `file_name`;
    `take_media` reads them from the validated data."""

    media_type = media_type_field()
    media_url = MediaUrlField(required=False, allow_null=True)
    id = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=128,
        help_text="An uploaded WhatsApp media id, instead of `media_url`.",
    )
    caption = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=CAPTION_MAX,
        trim_whitespace=False,
    )
    file_name = optional_text(FILE_NAME_MAX)

    def validate_id(self, value):
        if value and not MEDIA_ID.match(value):
            raise serializers.ValidationError("The media id is letters, digits and `_.:-`.")
        return value or None


def take_media(attrs: dict[str, Any]) -> dict[str, Any]:
    """MediaFields' validated values, taken out of `attrs`: the send services' media
    arguments, blanks as None. Exactly one of `media_url` and `id` must be given."""
    media = {
        "media_type": attrs.pop("media_type"),
        "media_url": attrs.pop("media_url", None) or None,
        "media_id": attrs.pop("id", None) or None,
        "caption": attrs.pop("caption", None) or None,
        "file_name": attrs.pop("file_name", None) or None,
    }
    if media["media_id"] is None and media["media_url"] is None:
        raise serializers.ValidationError(
            {"media_url": ["Give the media's `media_url`, or its uploaded media `id`."]}
        )
    if media["media_id"] is not None and media["media_url"] is not None:
        raise serializers.ValidationError({"id": ["Give `media_url` or `id`, not both."]})
    return media


class SendMediaInputSerializer(NewContactFields, MediaFields):
    """`POST /api/send/media`: a media message by link or by an uploaded media's id, and
    the contact fields a contact created for the number gets. Lenient as the original
    product: `caption` and `file_name` are taken for every type and passed on only where
    WhatsApp takes them (sending/services/payloads.py)."""

    phone = PhoneNumberField()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        attrs.update(take_media(attrs))
        return attrs


# What Meta documents for sending a template (its pages on template messages, and on
# limited-time offer, carousel, catalog, multi-product, flow, order-details and tap-target
# templates). Types are matched without regard to case, as Graph matches them.
COMPONENT_TYPES = (
    "header",
    "body",
    "button",
    "carousel",
    "limited_time_offer",
    "tap_target_configuration",
)
CARD_COMPONENT_TYPES = ("header", "body", "button")  # inside a carousel card
PARAMETER_TYPES = (
    "text",
    "currency",
    "date_time",
    "image",
    "document",
    "video",
    "location",
    "payload",
    "coupon_code",
    "action",
    "product",
    "limited_time_offer",
    "tap_target_configuration",
)
MAX_INDEX = 9  # a template has at most 10 buttons, a carousel at most 10 cards
COMPONENTS_MAX_BYTES = 64 * 1024


class TemplateComponentField(PassThroughJSONField):
    """A component as Meta documents it for sending, passed on as given.

    Checked before anything leaves: storable text, finite numbers and depth
    (PassThroughJSONField), then the type, a button's `sub_type` and `index`, a
    carousel's cards, and each parameter's type and value.
    """

    default_error_messages = {"invalid": "Must be an object."}
    max_depth = 8  # Meta's deepest documented component, an order-details button, uses all 8

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            self.fail("invalid")
        data = super().to_internal_value(data)
        errors = component_errors(data, COMPONENT_TYPES)
        if errors:
            raise serializers.ValidationError(errors)
        return data


def one_of(types: tuple[str, ...]) -> str:
    # Lists what is accepted rather than echoing what was sent, which may not be printable.
    return "Must be one of: " + ", ".join(types) + "."


def is_index(value: Any) -> bool:
    """0 to 9, as a number or as digits (Meta's examples use both)."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_INDEX


def component_errors(component: dict[str, Any], types: tuple[str, ...]) -> dict[str, Any]:
    errors: dict[str, Any] = {}
    kind = component.get("type")
    if not isinstance(kind, str) or not kind.strip():
        errors["type"] = ["A component needs a type, such as body."]
    elif kind.lower() not in types:
        errors["type"] = [one_of(types)]
    elif kind.lower() == "button":
        sub_type = component.get("sub_type")
        if not isinstance(sub_type, str) or not sub_type.strip():
            errors["sub_type"] = ["A button needs its sub_type, such as quick_reply or url."]
        if not is_index(component.get("index")):
            errors["index"] = ["A button needs its index, 0 to 9."]
    elif kind.lower() == "carousel":
        cards = component.get("cards")
        if not isinstance(cards, list) or not cards:
            errors["cards"] = ["A carousel needs its cards, a list."]
        else:
            problems = [card_errors(card) for card in cards]
            if any(problems):
                errors["cards"] = problems
    parameters = component.get("parameters")
    if parameters is not None:
        if not isinstance(parameters, list):
            errors["parameters"] = ["Must be a list."]
        else:
            problems = [parameter_errors(parameter) for parameter in parameters]
            if any(problems):
                errors["parameters"] = problems
    return errors


def card_errors(card: Any) -> dict[str, Any] | list[str]:
    if not isinstance(card, dict):
        return ["A card must be an object with its card_index and components."]
    errors: dict[str, Any] = {}
    if not is_index(card.get("card_index")):
        errors["card_index"] = ["A card needs its card_index, 0 to 9."]
    components = card.get("components")
    if not isinstance(components, list):
        errors["components"] = ["A card needs its components, a list."]
    else:
        problems = [
            component_errors(item, CARD_COMPONENT_TYPES)
            if isinstance(item, dict)
            else ["A component must be an object with a type."]
            for item in components
        ]
        if any(problems):
            errors["components"] = problems
    return errors


def parameter_errors(parameter: Any) -> dict[str, list[str]]:
    if not isinstance(parameter, dict):
        return {"type": ["A parameter must be an object with a type."]}
    kind = parameter.get("type")
    if not isinstance(kind, str) or not kind:
        return {"type": ["A parameter needs a type, such as text."]}
    kind = kind.lower()
    if kind not in PARAMETER_TYPES:
        return {"type": [one_of(PARAMETER_TYPES)]}
    if kind == "text" and not isinstance(parameter.get("text"), str):
        return {"text": ["A text parameter needs its text."]}
    if parameter.get(kind) is None:  # Meta's rule: the value sits under the type's name
        return {kind: [f"A {kind} parameter needs its {kind}."]}
    return {}


class LanguageSerializer(serializers.Serializer):
    code = StrictCharField(max_length=16)

    def validate_code(self, value: str) -> str:
        if not LANGUAGE_CODE.match(value):
            raise serializers.ValidationError("The language code must look like en or en_US.")
        return value


class TemplateSerializer(serializers.Serializer):
    name = StrictCharField(max_length=512)
    language = LanguageSerializer()
    components = serializers.ListField(
        child=TemplateComponentField(),
        required=False,
        allow_null=True,
        validators=[MaxJSONBytesValidator(COMPONENTS_MAX_BYTES)],
    )


class SendTemplateInputSerializer(NewContactFields):
    phone = PhoneNumberField()
    template = TemplateSerializer()


class InteractiveField(PassThroughJSONField):
    """WhatsApp's interactive object, passed on as given once its limits hold
    (messaging_project/core/interactive.py): every broken limit is named by its path."""

    max_depth = 6  # a list: interactive > action > sections > section > rows > row

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        data = super().to_internal_value(data)
        errors = in_english(interactive_errors(data))
        if errors.get(""):
            raise serializers.ValidationError(errors[""])
        if errors:
            raise serializers.ValidationError(errors)
        return data


class SendInteractiveInputSerializer(NewContactFields):
    """`POST /api/send/interactive`: reply buttons, a list, a call-to-action URL button, a
    location request or a Flow, as WhatsApp's interactive object."""

    phone = PhoneNumberField()
    interactive = InteractiveField(validators=[MaxJSONBytesValidator(COMPONENTS_MAX_BYTES)])


class SendReactionInputSerializer(NewContactFields):
    """`POST /api/send/reaction`: an emoji on a message; an empty emoji removes it."""

    phone = PhoneNumberField()
    message_id = StrictCharField(
        max_length=REPLY_TO_MAX,
        help_text="The message reacted to: a chat uuid of the organization, or a WhatsApp "
        "message id (`wamid....`).",
    )
    emoji = StrictCharField(required=False, allow_blank=True, default="", max_length=REACTION_MAX)

    def validate_emoji(self, value: str) -> str:
        if value and not any(not character.isascii() for character in value):
            raise serializers.ValidationError("An emoji, such as 👍; empty removes the reaction.")
        return value


class SendLocationInputSerializer(NewContactFields):
    """`POST /api/send/location`: a pin on the map, with an optional name and address."""

    phone = PhoneNumberField()
    latitude = serializers.FloatField(min_value=-90, max_value=90)
    longitude = serializers.FloatField(min_value=-180, max_value=180)
    name = optional_text(LOCATION_TEXT_MAX)
    address = optional_text(LOCATION_TEXT_MAX)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        location = {"latitude": attrs.pop("latitude"), "longitude": attrs.pop("longitude")}
        for field in ("name", "address"):
            value = attrs.pop(field, None)
            if value:
                location[field] = value
        attrs["location"] = location
        return attrs


class ContactCardField(PassThroughJSONField):
    """One of WhatsApp's contact cards: an object with its `name.formatted_name`."""

    max_depth = 4  # card > phones > phone

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise serializers.ValidationError("A contact card must be an object.")
        data = super().to_internal_value(data)
        name = data.get("name")
        formatted = name.get("formatted_name") if isinstance(name, dict) else None
        if not isinstance(formatted, str) or not formatted.strip():
            raise serializers.ValidationError(
                {"name.formatted_name": ["Required: the name shown."]}
            )
        for field in ("phones", "emails", "urls", "addresses"):
            if field in data and not isinstance(data[field], list):
                raise serializers.ValidationError({field: ["Must be a list."]})
        return data


class SendContactsInputSerializer(NewContactFields):
    """`POST /api/send/contacts`: one or more contact cards, as WhatsApp's contact objects."""

    phone = PhoneNumberField()
    contacts = serializers.ListField(
        child=ContactCardField(),
        min_length=1,
        max_length=CONTACT_CARDS_MAX,
        validators=[MaxJSONBytesValidator(COMPONENTS_MAX_BYTES)],
    )
