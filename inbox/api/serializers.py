"""The inbox's API input (the output shapes are in inbox/representations.py)."""

from typing import Any

from django.contrib.auth import get_user_model
from rest_framework import serializers

from inbox.models import NOTE_MAX_LENGTH
from inbox.selectors import NOBODY
from inbox.services import LABEL_MAX_LENGTH, MAX_LABELS, NOT_STAFF
from messaging_project.api.fields import StrictBooleanField, StrictCharField
from sending.api.serializers import (
    CAPTION_MAX,
    FILE_NAME_MAX,
    MEDIA_ID,
    TEXT_BODY_MAX,
    MediaUrlField,
    TemplateSerializer,
    optional_text,
    reply_to_field,
)
from sending.models import ConversationStatus
from sending.services.payloads import MEDIA_TYPES


class ConversationFilterSerializer(serializers.Serializer):
    """The list's query parameters."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # `label` names an attribute every field has: not a class attribute.
        self.fields["label"] = StrictCharField(
            required=False, allow_blank=True, max_length=LABEL_MAX_LENGTH
        )

    status = serializers.ChoiceField(
        choices=ConversationStatus.choices,
        required=False,
        allow_blank=True,
        error_messages={
            "invalid_choice": "The status must be one of: "
            + ", ".join(ConversationStatus.values)
            + "."
        },
    )
    assignee = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=150,
        help_text=f"A staff member's username, or `{NOBODY}` for the unassigned.",
    )
    unread = StrictBooleanField(
        required=False, help_text="`true`: only those with unread messages."
    )
    search = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=100,
        help_text="In the contact's name, or its phone digits.",
    )


class ConversationEditSerializer(serializers.Serializer):
    """`PATCH /api/conversations/{uuid}`: any of the three; `assignee` a username or null."""

    status = serializers.ChoiceField(
        choices=ConversationStatus.choices,
        required=False,
        error_messages={
            "invalid_choice": "The status must be one of: "
            + ", ".join(ConversationStatus.values)
            + "."
        },
    )
    assignee = StrictCharField(
        required=False,
        allow_null=True,
        max_length=150,
        help_text="A staff member's username; null to unassign.",
    )
    labels = serializers.ListField(
        child=StrictCharField(max_length=LABEL_MAX_LENGTH, allow_blank=True),
        required=False,
        max_length=MAX_LABELS,
        help_text=f"The whole list (at most {MAX_LABELS}, each at most {LABEL_MAX_LENGTH} "
        "characters); trimmed, blanks and repeats (ignoring case) dropped.",
    )

    def validate_assignee(self, value: str | None) -> Any:
        """The staff member named (the service checks their organization)."""
        if value is None:
            return None
        user = get_user_model().objects.filter(username=value).first()
        if user is None:
            raise serializers.ValidationError(NOT_STAFF)
        return user


class NoteInputSerializer(serializers.Serializer):
    body = StrictCharField(max_length=NOTE_MAX_LENGTH)


class ConversationMessageInputSerializer(serializers.Serializer):
    """`POST /api/conversations/{uuid}/messages`: a text (`message`), a template
    (`template`, as /api/send/template takes it), or a media message (`media_type` with
    `media_url` or `id`, as /api/send/media takes them); `reply_to` with any."""

    message = StrictCharField(required=False, max_length=TEXT_BODY_MAX, trim_whitespace=False)
    template = TemplateSerializer(required=False)
    media_type = serializers.ChoiceField(
        choices=MEDIA_TYPES,
        required=False,
        error_messages={
            "invalid_choice": "The media type must be one of: " + ", ".join(MEDIA_TYPES) + "."
        },
    )
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
    reply_to = reply_to_field()

    def validate_message(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("The message may not be blank.")
        return value

    def validate_id(self, value):
        if value and not MEDIA_ID.match(value):
            raise serializers.ValidationError("The media id is letters, digits and `_.:-`.")
        return value or None

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [name for name in ("message", "template", "media_type") if name in attrs]
        if len(given) != 1:
            raise serializers.ValidationError(
                {"message": ["Send exactly one of message, template or media_type."]}
            )
        send: dict[str, Any] = {"reply_to": attrs.get("reply_to") or None}
        if "message" in attrs:
            send["message"] = attrs["message"]
        elif "template" in attrs:
            send["template"] = attrs["template"]
        else:
            media_id, media_url = attrs.get("id") or None, attrs.get("media_url") or None
            if media_id is None and media_url is None:
                raise serializers.ValidationError(
                    {"media_url": ["Give the media's `media_url`, or its uploaded media `id`."]}
                )
            if media_id is not None and media_url is not None:
                raise serializers.ValidationError({"id": ["Give `media_url` or `id`, not both."]})
            send["media"] = {
                "media_type": attrs["media_type"],
                "media_url": media_url,
                "media_id": media_id,
                "caption": attrs.get("caption") or None,
                "file_name": attrs.get("file_name") or None,
            }
        return send
